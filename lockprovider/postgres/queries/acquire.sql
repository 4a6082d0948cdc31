-- Acquire with a tick (see acquire_fast.sql for the plain path): one
-- statement in autocommit.
--   c    reads the server clock once (clock_timestamp, not now(): now() is
--        frozen at the start of a caller's transaction).
--   cur  locks the existing row, if any, with NOWAIT, so a contender fails
--        fast (55P03) instead of queueing behind another session's open
--        transaction; holding the lock also makes cur's values the ones the
--        upsert's WHERE is evaluated against, so the refusal reason below
--        is exact.
--   up   inserts a fresh row, or takes over an expired one, bumping the
--        fence under the row lock (never nextval) to at least the server
--        time in microseconds.
-- The final row reports whether up granted and, if not, cur's state, from
-- which the caller tells "held by another", "already mine" and "stale
-- tick" apart without a second round trip.
-- $1 name, $2 owner, $3 locked_by, $4 at_most_for, $5 at_least_for,
-- $6 tick (NULL for none).
WITH c AS MATERIALIZED (
    SELECT clock_timestamp() AS now
), cur AS MATERIALIZED (
    SELECT t.owner, t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick
    FROM {{.Locks}} t
    WHERE t.name = $1
    FOR UPDATE NOWAIT
), up AS (
    INSERT INTO {{.Locks}} AS t
        (name, owner, locked_by, locked_at, lock_until, at_least_until, fence, last_tick)
    SELECT $1, $2, $3, c.now, c.now + $4::interval, c.now + $5::interval,
        -- A new row starts its fence at the server time in microseconds, so
        -- tokens still increase if an operator deleted the row.
        (extract(epoch FROM c.now) * 1000000)::bigint, $6::timestamptz
    FROM c LEFT JOIN cur ON true
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
    cur.owner,
    COALESCE(up.locked_at, cur.locked_at),
    COALESCE(up.lock_until, cur.lock_until),
    COALESCE(up.at_least_until, cur.at_least_until),
    COALESCE(up.fence, cur.fence),
    CASE WHEN up.fence IS NOT NULL THEN up.last_tick ELSE cur.last_tick END
FROM c LEFT JOIN up ON true LEFT JOIN cur ON true
