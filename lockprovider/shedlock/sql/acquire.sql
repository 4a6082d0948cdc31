-- Acquire, one statement in autocommit, with ShedLock's semantics: insert
-- the row if absent, else take it over only if its lock_until has passed.
--   c     the server clock, read once (clock_timestamp, not now(): now() is
--         frozen at the start of a caller's transaction).
--   snap  the existing row, if any, as of the statement's snapshot, without
--         a lock; open says whether this claim could take it (lock_until
--         passed and, with a tick, the tick newer than the last one).
--   cur   locks the row with NOWAIT only when it is open: a claim that
--         cannot win (a stale tick, a lock still held) takes no row lock,
--         so it never makes a claim that would win fail with 55P03, and a
--         contender that can win fails fast instead of queueing behind an
--         open transaction.
--   up    the upsert, run only when the row is missing or locked by cur
--         (ON CONFLICT DO UPDATE would lock a row even when its WHERE
--         refuses). lock_until and locked_at are written in the form the
--         Java fleet reads (see the time mode); the other columns are
--         baton's. In the ON CONFLICT clause the grant instant is
--         excluded.at_least_until - $5, which is exact.
-- A tick is refused unless it is newer than the last Go tick and than the
-- last grant of anyone: a Java replica that ran the job at or after the
-- tick's time has served that tick.
-- The holder is identified by owner AND by the owner suffix of locked_by:
-- a Java takeover rewrites locked_by (never owner), so a stale owner
-- column alone can never make a Go replica think it holds a Java lock.
-- Fences never go below the server time in microseconds, so tokens keep
-- increasing across a switch to or from baton's native table.
-- $1 name, $2 owner, $3 locked_by ending in '#' || owner, $4 at_most_for,
-- $5 at_least_for, $6 tick (NULL for none).
WITH c AS MATERIALIZED (
    SELECT clock_timestamp() AS ts
), snap AS MATERIALIZED (
    SELECT t.owner, t.locked_by, t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick,
        {{inst "t.lock_until"}} <= c.ts AS expired,
        {{inst "t.lock_until"}} <= c.ts AND ($6::timestamptz IS NULL OR (
            (t.last_tick IS NULL OR t.last_tick < $6::timestamptz)
            AND {{inst "t.locked_at"}} < $6::timestamptz)) AS open
    FROM {{.Table}} t, c
    WHERE t.name = $1
), cur AS MATERIALIZED (
    SELECT t.name
    FROM {{.Table}} t, c
    WHERE t.name = $1
      AND {{inst "t.lock_until"}} <= c.ts AND ($6::timestamptz IS NULL OR (
            (t.last_tick IS NULL OR t.last_tick < $6::timestamptz)
            AND {{inst "t.locked_at"}} < $6::timestamptz))
    FOR UPDATE OF t NOWAIT
), up AS (
    INSERT INTO {{.Table}} AS t
        (name, lock_until, locked_at, locked_by, owner, at_least_until, fence, last_tick)
    SELECT $1, {{until "c.ts" "$4::interval"}}, {{wall "c.ts"}}, $3, $2, c.ts + $5::interval,
        (extract(epoch FROM c.ts) * 1000000)::bigint, $6::timestamptz
    FROM c
    WHERE NOT EXISTS (SELECT 1 FROM snap) OR EXISTS (SELECT 1 FROM cur)
    ON CONFLICT (name) DO UPDATE SET
        lock_until     = excluded.lock_until,
        locked_at      = excluded.locked_at,
        locked_by      = excluded.locked_by,
        owner          = excluded.owner,
        at_least_until = excluded.at_least_until,
        fence          = GREATEST(COALESCE(t.fence, 0) + 1, excluded.fence),
        last_tick      = COALESCE(excluded.last_tick, t.last_tick)
    WHERE {{inst "t.lock_until"}} <= excluded.at_least_until - $5::interval
      AND (excluded.last_tick IS NULL OR (
            (t.last_tick IS NULL OR t.last_tick < excluded.last_tick)
            AND {{inst "t.locked_at"}} < excluded.last_tick))
    RETURNING t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick
)
SELECT up.fence IS NOT NULL,
    snap.locked_by IS NOT NULL,
    NOT snap.expired,
    COALESCE(snap.owner = $2 AND right(snap.locked_by, length($2) + 1) = '#' || $2, false),
    COALESCE(snap.open, false),
    {{inst "COALESCE(up.locked_at, snap.locked_at)"}},
    {{inst "COALESCE(up.lock_until, snap.lock_until)"}},
    COALESCE(up.at_least_until, snap.at_least_until),
    COALESCE(up.fence, snap.fence),
    CASE WHEN up.fence IS NOT NULL THEN up.last_tick ELSE snap.last_tick END
FROM c LEFT JOIN up ON true LEFT JOIN snap ON true
