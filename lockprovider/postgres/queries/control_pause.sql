-- Set ($2 true) or clear the paused flag of job $1 and announce the change
-- on the release channel (see release.sql), payload $3, in one statement.
-- Setting a set flag keeps its paused_at; clearing one records the ended
-- pause in {{.Resumed}}.
WITH ins AS (
    INSERT INTO {{.Paused}} (job, paused_at)
    SELECT $1, clock_timestamp() WHERE $2::boolean
    ON CONFLICT (job) DO NOTHING
), del AS (
    DELETE FROM {{.Paused}} WHERE job = $1 AND NOT $2::boolean
    RETURNING job, paused_at
), ended AS (
    INSERT INTO {{.Resumed}} (job, paused_at, resumed_at)
    SELECT job, paused_at, clock_timestamp() FROM del
    ON CONFLICT (job) DO UPDATE SET paused_at = EXCLUDED.paused_at, resumed_at = EXCLUDED.resumed_at
)
SELECT pg_notify('baton_release:' || '{{.Locks}}'::regclass::oid::text, $3) IS NULL
