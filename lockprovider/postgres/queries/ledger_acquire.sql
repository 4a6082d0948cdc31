-- The ledger's part of a claim, spliced into acquire.sql before its final
-- SELECT (see ops.go), so the lease logic is acquire.sql's own. A grant
-- (a row from up) also inserts the run row, numbered after the job's
-- newest (prev: the last entry of the primary key for the job; nothing is
-- read when the claim was refused).
--
-- Retention is amortised (lockprovider.RetentionSlack, 16): only the
-- claim whose run number is a multiple of 16 trims, calling
-- <runs table>_trim (see 003_ops.sql) while it computes the number, so
-- a job holds at most $9 + 15 rows, and a row older than $10 is gone by
-- the 16th claim after it aged out. (Keeping the newest success apart
-- would cost a scan of the job's rows; LastRuns reports the newest
-- retained success.)
-- $7 catch_up, $8 manual, $9 max runs, $10 max age.
, prev AS MATERIALIZED (
    SELECT COALESCE((SELECT s.seq FROM {{.Runs}} s WHERE s.job = $1 ORDER BY s.token DESC LIMIT 1), 0) + 1 AS seq,
        up.fence, up.locked_at
    FROM up
), run AS (
    INSERT INTO {{.Runs}} AS r (job, token, seq, tick, locked_by, started_at, catch_up, manual)
    SELECT $1, prev.fence,
        CASE WHEN prev.seq % 16 = 0
            THEN __TRIM__($1, prev.seq, $9::bigint, prev.locked_at - $10::interval)
            ELSE prev.seq END,
        $6::timestamptz, $3, prev.locked_at, $7, $8
    FROM prev
    ON CONFLICT (job, token) DO NOTHING
)
