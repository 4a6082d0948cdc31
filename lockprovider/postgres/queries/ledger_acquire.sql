-- The ledger's part of a claim, spliced into acquire.sql before its final
-- SELECT (see ops.go), so the lease logic is acquire.sql's own. A grant
-- (a row from up) also inserts the run row, numbered after the job's
-- newest (prev: one index entry); then the runs beyond the retention are
-- deleted: those $9 or more numbers behind (at most $9 remain), except the
-- job's newest success, and, among the four oldest, those that started
-- more than $10 before the grant. Each is a short index range scan that
-- finds nothing most of the time.
-- $7 catch_up, $8 manual, $9 max runs, $10 max age.
, prev AS MATERIALIZED (
    SELECT COALESCE(max(s.seq), 0) + 1 AS seq FROM {{.Runs}} s WHERE s.job = $1
), run AS (
    INSERT INTO {{.Runs}} AS r (job, token, seq, tick, locked_by, started_at, catch_up, manual)
    SELECT $1, up.fence, prev.seq, $6::timestamptz, $3, up.locked_at, $7, $8
    FROM up, prev
    ON CONFLICT (job, token) DO NOTHING
), last_ok AS MATERIALIZED (
    SELECT s.token FROM {{.Runs}} s
    WHERE s.job = $1 AND s.outcome = 'succeeded'
    ORDER BY s.seq DESC LIMIT 1
), by_count AS (
    DELETE FROM {{.Runs}} r
    USING up, prev
    WHERE r.job = $1 AND r.seq <= prev.seq - $9::bigint
      AND r.token IS DISTINCT FROM (SELECT token FROM last_ok)
), by_age AS (
    DELETE FROM {{.Runs}} r
    USING up
    WHERE r.job = $1 AND r.started_at < up.locked_at - $10::interval
      AND r.token = ANY (ARRAY(SELECT o.token FROM {{.Runs}} o WHERE o.job = $1 ORDER BY o.seq LIMIT 4))
)
