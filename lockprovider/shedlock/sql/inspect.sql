-- The state of the names in $1 (text[]), or of every name when $1 is NULL.
SELECT t.name, {{inst "t.lock_until"}} > clock_timestamp(), t.locked_by, t.owner,
    {{inst "t.locked_at"}}, {{inst "t.lock_until"}}, COALESCE(t.fence, 0), t.last_tick
FROM {{.Table}} t
WHERE $1::text[] IS NULL OR t.name = ANY ($1::text[])
ORDER BY t.name
