-- The ledger's part of a batch claim (AcquireRunBatch), spliced into
-- batch_acquire.sql before its final SELECT as ledger_acquire.sql is into
-- acquire.sql, with the same steps per granted name: the run row numbered
-- after the job's newest, then the job's four oldest rows deleted when
-- beyond the retention.
-- $7 catch_up, $8 manual, $9 max runs, $10 max age (for every item).
, prev AS MATERIALIZED (
    SELECT up.name, up.fence, up.locked_at,
        COALESCE((SELECT s.seq FROM {{.Runs}} s WHERE s.job = up.name ORDER BY s.token DESC LIMIT 1), 0) + 1 AS seq
    FROM up
), run AS (
    INSERT INTO {{.Runs}} AS r (job, token, seq, tick, locked_by, started_at, catch_up, manual)
    SELECT prev.name, prev.fence, prev.seq, i.tick, i.locked_by, prev.locked_at, $7, $8
    FROM prev JOIN i ON i.name = prev.name
    ON CONFLICT (job, token) DO NOTHING
), trim AS (
    -- By ctid, as in ledger_acquire.sql.
    DELETE FROM {{.Runs}} r
    USING (
        SELECT o.ctid AS id
        FROM prev CROSS JOIN LATERAL (
            SELECT o.ctid, o.seq, o.started_at FROM {{.Runs}} o WHERE o.job = prev.name ORDER BY o.token LIMIT 4
        ) o
        WHERE o.seq <= prev.seq - $9::bigint OR o.started_at < prev.locked_at - $10::interval
    ) old
    WHERE r.ctid = old.id
)
