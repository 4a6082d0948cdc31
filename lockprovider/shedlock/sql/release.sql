-- Release, as ShedLock unlocks: lock_until becomes the later of now and
-- the minimum-hold bound. One UPDATE of a live lease held by the owner,
-- live when the row is locked (see extend.sql).
-- $1 name, $2 owner.
UPDATE {{.Table}} AS t SET
    lock_until = CASE WHEN t.at_least_until > c.ts
        THEN {{until "c.ts" "(t.at_least_until - c.ts)"}}
        ELSE {{wall "c.ts"}} END
FROM (SELECT clock_timestamp() AS ts) c
WHERE t.name = $1 AND t.owner = $2 AND right(t.locked_by, length($2) + 1) = '#' || $2
  AND {{inst "t.lock_until"}} > clock_timestamp()
