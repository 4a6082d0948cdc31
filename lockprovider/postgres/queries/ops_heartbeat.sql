-- Renew a live entry for $2. $1 locked_by.
UPDATE {{.Registry}} g SET heartbeat_at = clock_timestamp(), until = clock_timestamp() + $2::interval
WHERE g.locked_by = $1 AND g.until > clock_timestamp()
