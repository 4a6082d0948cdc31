-- Publish an instance for $3 and drop the entries of others departed
-- (lapsed or left) longer than the retention (batontype.DepartedRetention,
-- __KEEP__) ago; registering again makes a departed entry live.
-- $1 locked_by, $2 info (JSON), $3 ttl.
WITH gone AS (
    DELETE FROM {{.Registry}} g WHERE g.until <= clock_timestamp() - __KEEP__ AND g.locked_by <> $1
)
INSERT INTO {{.Registry}} AS g (locked_by, info, heartbeat_at, until, left_at)
VALUES ($1, $2, clock_timestamp(), clock_timestamp() + $3::interval, NULL)
ON CONFLICT (locked_by) DO UPDATE SET
    info = excluded.info, heartbeat_at = excluded.heartbeat_at, until = excluded.until, left_at = NULL
