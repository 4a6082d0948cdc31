-- Acquire without a tick: the lean form of acquire.sql for the plain lock
-- path. One INSERT in autocommit:
--   c.now    the server clock, read once (clock_timestamp, not now(): now()
--            is frozen at the start of a caller's transaction).
--   WHERE    the insert is attempted only when there is no row yet, or when
--            the row could be taken (its lease ended) or is the caller's
--            own; that row is locked with NOWAIT first, so a contender fails
--            fast (55P03) instead of queueing behind another session's open
--            transaction. A row held by another owner is neither locked nor
--            touched (ON CONFLICT DO UPDATE would lock it even when its
--            WHERE refuses): a refused contender must not keep the row
--            locked, or a later contender would be refused (55P03) after
--            the lease ended, for as long as the refused statement or its
--            caller's transaction lasts.
-- The upsert inserts a fresh row or takes over an expired one, bumping the
-- fence under the row lock (never nextval) to at least the server time in
-- microseconds (excluded.fence), so that the token of a grant rolled back
-- with a caller's transaction is not issued again. A live lease of the same owner
-- passes the WHERE too and keeps every value (an idempotent retry returns
-- the same grant); a live lease of another owner returns no row.
-- $1 name, $2 owner, $3 locked_by, $4 at_most_for, $5 at_least_for.
INSERT INTO {{.Locks}} AS t
    (name, owner, locked_by, locked_at, lock_until, at_least_until, fence)
SELECT $1, $2, $3, c.now, c.now + $4::interval, c.now + $5::interval,
    -- A new row starts its fence at the server time in microseconds, so
    -- tokens still increase if an operator deleted the row.
    (extract(epoch FROM c.now) * 1000000)::bigint
FROM (SELECT clock_timestamp() AS now) c
WHERE NOT EXISTS (SELECT 1 FROM {{.Locks}} s WHERE s.name = $1)
   OR EXISTS (SELECT 1 FROM {{.Locks}} p WHERE p.name = $1 AND (p.lock_until <= c.now OR p.owner = $2) FOR UPDATE NOWAIT)
ON CONFLICT (name) DO UPDATE SET
    owner          = excluded.owner,
    locked_by      = CASE WHEN t.lock_until > excluded.locked_at THEN t.locked_by ELSE excluded.locked_by END,
    locked_at      = CASE WHEN t.lock_until > excluded.locked_at THEN t.locked_at ELSE excluded.locked_at END,
    lock_until     = CASE WHEN t.lock_until > excluded.locked_at THEN t.lock_until ELSE excluded.lock_until END,
    at_least_until = CASE WHEN t.lock_until > excluded.locked_at THEN t.at_least_until ELSE excluded.at_least_until END,
    fence          = CASE WHEN t.lock_until > excluded.locked_at THEN t.fence ELSE GREATEST(t.fence + 1, excluded.fence) END
WHERE t.lock_until <= excluded.locked_at OR t.owner = excluded.owner
RETURNING t.locked_at, t.lock_until, t.at_least_until, t.fence
