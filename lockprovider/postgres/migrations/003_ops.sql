-- The run ledger: one row per claimed tick, keyed by job and fencing token
-- (unique per grant, increasing in claim order), numbered per job by seq
-- (1, 2, 3, ...; tokens have gaps). The claim inserts the row, the release
-- completes it; a row without finished_at is a run still going or one
-- whose process died. Every 16th claim of a job deletes its rows beyond
-- the retention (<table>_trim below, see ledger_acquire.sql), so the
-- table stays bounded. The primary key is the only index: every query
-- walks it from one end of a job's rows. fillfactor leaves room on each
-- page for the release's update of a fresh row to be HOT (it changes no
-- indexed column).
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

-- <runs table>_trim(job, run number, max runs, cut) deletes those of the
-- job's 32 oldest runs that are max runs or more numbers behind the run
-- number, or started before cut, and returns the run number. A function,
-- so that the claims that do not trim (15 in 16) pay nothing for it: a
-- DELETE written into the claim's statement is set up by every execution.
-- Claims of a job are serialised by its lease row lock, so no other trim
-- moves these rows; a row a release updates meanwhile survives until the
-- next trim.
DO $migrate$
DECLARE
    rel regclass := '{{.Runs}}'::regclass;
    nsp text;
    tbl text;
BEGIN
    SELECT n.nspname, c.relname INTO nsp, tbl
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = rel;
    EXECUTE format($fmt$
CREATE OR REPLACE FUNCTION %I.%I(p_job text, p_seq bigint, p_max bigint, p_cut timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM {{.Runs}} WHERE ctid = ANY (ARRAY(
        SELECT o.ctid
        FROM (SELECT r.ctid, r.seq, r.started_at FROM {{.Runs}} r WHERE r.job = p_job ORDER BY r.token LIMIT 32) o
        WHERE o.seq <= p_seq - p_max OR o.started_at < p_cut));
    RETURN p_seq;
END
$fn$
$fmt$, nsp, tbl || '_trim');
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
