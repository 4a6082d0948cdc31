-- End a held lease, or shorten it to its at-least bound. Only a release
-- that frees the name is announced, on the shard channel named like the
-- lease key.
--
-- KEYS[1] lease (as in lock_acquire.lua)
-- ARGV[1] owner
-- Returns 1, or 0 when the owner does not hold the lease.
local v = redis.call('GET', KEYS[1])
if not v or string.byte(v, #ARGV[1] + 1) ~= 10 or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
if string.byte(v, #ARGV[1] + 2) ~= 48 then -- an at-least bound other than '0'
  local _, e, a, g = string.find(v, '^(%S+) (%S+)', #ARGV[1] + 2)
  if string.byte(g, 1) == 43 then
    g = redis.call('PEXPIRETIME', KEYS[1]) - tonumber(string.sub(g, 2))
  else
    g = tonumber(g)
  end
  if string.byte(a, 1) == 43 then a = g + tonumber(string.sub(a, 2)) else a = tonumber(a) end
  local tm = redis.call('TIME')
  if a > tm[1] * 1000 + math.floor(tm[2] / 1000) then
    -- The expiry moves, so the value switches to absolute times.
    redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. a .. ' ' .. g .. string.sub(v, e + 1), 'PXAT', a)
    return 1
  end
end
redis.call('DEL', KEYS[1])
redis.call('SPUBLISH', KEYS[1], '')
return 1
