-- Fenced set: store ARGV[2] in hash KEYS[1] if token ARGV[1] is not smaller
-- than the hash's stored fence, and store the token as the new fence.
-- Tokens are canonical decimal strings (no sign, no leading zeros), compared
-- by length then bytes so that values above 2^53 compare exactly.
-- Returns 0 when applied, else the stored fence (a string).
local cur = redis.call('HGET', KEYS[1], 'fence')
if cur and (#cur > #ARGV[1] or (#cur == #ARGV[1] and cur > ARGV[1])) then
  return cur
end
redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
return 0
