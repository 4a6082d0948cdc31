-- Live registry entries.
SELECT g.locked_by, g.info, g.heartbeat_at, g.until
FROM {{.Registry}} g
WHERE g.until > clock_timestamp()
ORDER BY g.locked_by
