-- The lease table: one row per lock name, never deleted by baton, so the
-- fence column keeps increasing across release, expiry and takeover.
-- fillfactor leaves room on each page for HOT updates (only "name" is
-- indexed, so every lease update can be HOT).
CREATE TABLE IF NOT EXISTS {{.Locks}} (
    name           text        PRIMARY KEY,
    owner          text        NOT NULL,
    locked_by      text        NOT NULL DEFAULT '',
    locked_at      timestamptz NOT NULL,
    lock_until     timestamptz NOT NULL,
    at_least_until timestamptz NOT NULL,
    fence          bigint      NOT NULL,
    last_tick      timestamptz
) WITH (fillfactor = 80);

-- Names some process waits on (NotifyRelease), until "until": Release sends
-- a NOTIFY only for these, because NOTIFY makes committing transactions
-- queue on a cluster-wide lock. Kept apart from the lease rows so that
-- registering and renewing waiters never locks a lease row.
CREATE TABLE IF NOT EXISTS {{.Waiters}} (
    name  text        PRIMARY KEY,
    until timestamptz NOT NULL
);
