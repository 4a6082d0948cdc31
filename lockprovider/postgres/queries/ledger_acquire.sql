-- The ledger's part of a claim, spliced into acquire.sql before its final
-- SELECT (see ops.go), so the lease logic is acquire.sql's own. A grant
-- (a row from up) also inserts the run row, numbered after the job's
-- newest (prev: the last entry of the primary key for the job; nothing is
-- read when the claim was refused).
--
-- Retention is amortised (lockprovider.RetentionSlack, 16): only the
-- claim whose run number is a multiple of 16 trims, deleting those of the
-- job's 32 oldest rows that are beyond the retention: $9 or more numbers
-- behind the new one, or started more than $10 before it. So a job holds
-- at most $9 + 15 rows, and a row older than $10 is gone by the 16th
-- claim after it aged out; after the retention is lowered, each trim
-- drops up to 32 rows until the job is back within it. The other claims
-- read only the newest index entry of the job. (Keeping the newest
-- success apart would cost a scan of the job's rows; LastRuns reports the
-- newest retained success.)
-- $7 catch_up, $8 manual, $9 max runs, $10 max age.
, prev AS MATERIALIZED (
    SELECT COALESCE((SELECT s.seq FROM {{.Runs}} s WHERE s.job = $1 ORDER BY s.token DESC LIMIT 1), 0) + 1 AS seq
    FROM up
), run AS (
    INSERT INTO {{.Runs}} AS r (job, token, seq, tick, locked_by, started_at, catch_up, manual)
    SELECT $1, up.fence, prev.seq, $6::timestamptz, $3, up.locked_at, $7, $8
    FROM up, prev
    ON CONFLICT (job, token) DO NOTHING
), trim AS (
    -- The old rows are deleted by ctid, read with the oldest. Joined back
    -- on the primary key instead, the generic plan of the prepared
    -- statement hash-joined them against a scan of all the job's rows.
    -- The uncorrelated gate is a one-time filter: the other claims never
    -- start the scan. Claims of a job are serialised by the lease row
    -- lock, so no other trim moves these rows; a row a release updates
    -- meanwhile survives until the next trim.
    DELETE FROM {{.Runs}} r
    USING (
        SELECT o.ctid AS id
        FROM (SELECT o.ctid, o.seq, o.started_at FROM {{.Runs}} o
              WHERE o.job = $1 AND (SELECT p.seq % 16 = 0 FROM prev p)
              ORDER BY o.token LIMIT 32) o, up, prev
        WHERE o.seq <= prev.seq - $9::bigint OR o.started_at < up.locked_at - $10::interval
    ) old
    WHERE r.ctid = old.id
)
