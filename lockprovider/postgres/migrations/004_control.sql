-- Cluster-wide control of scheduled jobs (lockprovider.Control): the jobs
-- an operator paused, until resumed, and the pending requests to run a
-- job now. A request row is deleted by the replica that claims it (so
-- exactly one claims it) or, once expired, by the next state read.
CREATE TABLE IF NOT EXISTS {{.Paused}} (
    job       text        PRIMARY KEY,
    paused_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS {{.RunQueue}} (
    id           text        PRIMARY KEY,
    job          text        NOT NULL,
    requested_by text        NOT NULL DEFAULT '',
    requested_at timestamptz NOT NULL,
    until        timestamptz NOT NULL
);
