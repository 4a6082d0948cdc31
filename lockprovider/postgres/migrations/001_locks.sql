-- The lease table: one row per lock name, never deleted by baton, so the
-- fence column keeps increasing across release, expiry and takeover.
-- notify_until: a process has waiters for this name until then, so Release
-- sends a NOTIFY (NOTIFY serialises committing transactions cluster-wide,
-- so it is sent only when someone listens).
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
    last_tick      timestamptz,
    notify_until   timestamptz
) WITH (fillfactor = 80);
