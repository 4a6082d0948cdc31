-- The ledger's part of a claim, spliced into acquire.sql before its final
-- SELECT (see ops.go), so the lease logic is acquire.sql's own. A grant
-- (a row from up) also inserts the run row; then the runs beyond the
-- retention are deleted: older than $10, or $9 tokens or more behind the
-- new one (every run has its own token, so at most $9 remain), except the
-- job's newest success. Each DELETE is a range scan of an index and finds
-- nothing most of the time.
-- $7 catch_up, $8 manual, $9 max runs, $10 max age.
, run AS (
    INSERT INTO {{.Runs}} AS r (job, token, tick, locked_by, started_at, catch_up, manual)
    SELECT $1, up.fence, $6::timestamptz, $3, up.locked_at, $7, $8
    FROM up
    ON CONFLICT (job, token) DO NOTHING
), last_ok AS MATERIALIZED (
    SELECT s.token FROM {{.Runs}} s
    WHERE s.job = $1 AND s.outcome = 'succeeded'
    ORDER BY s.token DESC LIMIT 1
), by_count AS (
    DELETE FROM {{.Runs}} r
    USING up
    WHERE r.job = $1 AND r.token <= up.fence - $9::bigint
      AND r.token IS DISTINCT FROM (SELECT token FROM last_ok)
), by_age AS (
    DELETE FROM {{.Runs}} r
    USING up
    WHERE r.job = $1 AND r.started_at < up.locked_at - $10::interval
)
