-- The run ledger: one row per claimed tick, keyed by job and fencing token
-- (unique per grant), numbered per job by seq (1, 2, 3, ... in claim
-- order; tokens have gaps). The claim inserts the row, the release
-- completes it; a row without finished_at is a run still going or one
-- whose process died. The claims delete the rows beyond the retention
-- (see ledger_acquire.sql), so the table stays bounded.
CREATE TABLE IF NOT EXISTS {{.Runs}} (
    job         text        NOT NULL,
    token       bigint      NOT NULL,
    seq         bigint      NOT NULL,
    tick        timestamptz,
    locked_by   text        NOT NULL DEFAULT '',
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    outcome     text        NOT NULL DEFAULT '',
    error       text        NOT NULL DEFAULT '',
    catch_up    boolean     NOT NULL DEFAULT false,
    manual      boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (job, token)
);

DO $migrate$
DECLARE
    tbl text;
BEGIN
    SELECT c.relname INTO tbl FROM pg_class c WHERE c.oid = '{{.Runs}}'::regclass;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON {{.Runs}} (job, seq)', tbl || '_seq');
END
$migrate$;

-- The job registry: one row per live scheduler instance, with its jobs
-- (JSON) and the time its entry lapses unless renewed.
CREATE TABLE IF NOT EXISTS {{.Registry}} (
    locked_by    text        PRIMARY KEY,
    info         text        NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    until        timestamptz NOT NULL
);
