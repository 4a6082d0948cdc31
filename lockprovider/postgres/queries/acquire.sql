-- Acquire with a tick (see acquire_fast.sql for the plain path): one
-- statement in autocommit.
--   c     reads the server clock once (clock_timestamp, not now(): now() is
--         frozen at the start of a caller's transaction).
--   snap  the existing row, if any, as of the statement's snapshot, without
--         a lock; open says whether this claim could take it (lease ended
--         and the tick newer than the last granted).
--   cur   locks the row with NOWAIT only when it is open: a claim that
--         cannot win (a stale tick, a lease still held) takes no row lock,
--         so it can never make a claim that would win fail with 55P03. A
--         contender that can win fails fast instead of queueing behind
--         another session's open transaction. The lock also makes the
--         row's newest version the one the upsert's WHERE sees.
--   up    inserts a fresh row, or takes over an open one, bumping the
--         fence under the row lock (never nextval) to at least the server
--         time in microseconds. An existing row that
--         snap found closed is never touched: ON CONFLICT DO UPDATE would
--         lock it even when its WHERE refuses.
-- The final row reports whether up granted and, if not, snap's state, from
-- which the caller tells "held by another", "already mine" and "stale
-- tick" apart without a second round trip.
-- $1 name, $2 owner, $3 locked_by, $4 at_most_for, $5 at_least_for,
-- $6 tick (NULL for none).
WITH c AS MATERIALIZED (
    SELECT clock_timestamp() AS now
), snap AS MATERIALIZED (
    SELECT t.owner, t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick,
        t.lock_until <= c.now
            AND ($6::timestamptz IS NULL OR t.last_tick IS NULL OR t.last_tick < $6::timestamptz) AS open
    FROM {{.Locks}} t, c
    WHERE t.name = $1
), cur AS MATERIALIZED (
    SELECT t.name
    FROM {{.Locks}} t, c
    WHERE t.name = $1
      AND t.lock_until <= c.now
      AND ($6::timestamptz IS NULL OR t.last_tick IS NULL OR t.last_tick < $6::timestamptz)
    FOR UPDATE OF t NOWAIT
), up AS (
    INSERT INTO {{.Locks}} AS t
        (name, owner, locked_by, locked_at, lock_until, at_least_until, fence, last_tick)
    SELECT $1, $2, $3, c.now, c.now + $4::interval, c.now + $5::interval,
        -- A new row starts its fence at the server time in microseconds, so
        -- tokens still increase if an operator deleted the row.
        (extract(epoch FROM c.now) * 1000000)::bigint, $6::timestamptz
    FROM c
    WHERE NOT EXISTS (SELECT 1 FROM snap) OR EXISTS (SELECT 1 FROM cur)
    ON CONFLICT (name) DO UPDATE SET
        owner          = excluded.owner,
        locked_by      = excluded.locked_by,
        locked_at      = excluded.locked_at,
        lock_until     = excluded.lock_until,
        at_least_until = excluded.at_least_until,
        -- At least the server time in microseconds (excluded.fence):
        -- a grant rolled back with a caller's transaction takes its
        -- increment with it, and its token must not be issued again.
        fence          = GREATEST(t.fence + 1, excluded.fence),
        last_tick      = COALESCE(excluded.last_tick, t.last_tick)
    WHERE t.lock_until <= excluded.locked_at
      AND (excluded.last_tick IS NULL OR t.last_tick IS NULL OR t.last_tick < excluded.last_tick)
    RETURNING t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick
)
SELECT up.fence IS NOT NULL,
    c.now,
    snap.owner,
    COALESCE(snap.open, false),
    COALESCE(up.locked_at, snap.locked_at),
    COALESCE(up.lock_until, snap.lock_until),
    COALESCE(up.at_least_until, snap.at_least_until),
    COALESCE(up.fence, snap.fence),
    CASE WHEN up.fence IS NOT NULL THEN up.last_tick ELSE snap.last_tick END
FROM c LEFT JOIN up ON true LEFT JOIN snap ON true
