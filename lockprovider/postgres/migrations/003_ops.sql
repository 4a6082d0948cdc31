-- The run ledger: one row per claimed tick, keyed by job and fencing token
-- (unique per grant, increasing in claim order), numbered per job by seq
-- (1, 2, 3, ...; tokens have gaps). The claim inserts the row, the release
-- completes it; a row without finished_at is a run still going or one
-- whose process died. Every 16th claim of a job deletes its rows beyond
-- the retention (see ledger_acquire.sql), so the table stays bounded. The
-- primary key is the only index: every query walks it from one end of a
-- job's rows. fillfactor leaves room on each page for the release's
-- update of a fresh row to be HOT (it changes no indexed column).
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
) WITH (fillfactor = 80);

-- The job registry: one row per live scheduler instance, with its jobs
-- (JSON) and the time its entry lapses unless renewed.
CREATE TABLE IF NOT EXISTS {{.Registry}} (
    locked_by    text        PRIMARY KEY,
    info         text        NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    until        timestamptz NOT NULL
);
