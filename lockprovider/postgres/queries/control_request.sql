-- Record a request to run job $2 now, id $1, by $3, pending for $4, and
-- announce it (payload $5). One clock reading makes until - requested_at
-- exactly $4.
WITH ins AS (
    INSERT INTO {{.RunQueue}} (id, job, requested_by, requested_at, until)
    SELECT $1, $2, $3, c.now, c.now + $4::interval FROM (SELECT clock_timestamp() AS now) c
    RETURNING requested_at, until
)
SELECT requested_at, until, pg_notify('baton_release:' || '{{.Locks}}'::regclass::oid::text, $5) IS NULL FROM ins
