-- Mark names as having waiters, so that Release notifies for them until
-- notify_until. A name without a row gets a placeholder row (empty owner,
-- expired since -infinity), which Acquire takes over like any free row and
-- Inspect and List do not show. Run on the listening connection, which has
-- a short lock_timeout, and renewed while waiters remain. Rows are locked
-- in name order, so concurrent marks cannot deadlock.
-- $1 names (text[]), $2 how long the mark lasts.
INSERT INTO {{.Locks}} AS t
    (name, owner, locked_by, locked_at, lock_until, at_least_until, fence, notify_until)
SELECT w.name, '', '', c.now, '-infinity', '-infinity',
    (extract(epoch FROM c.now) * 1000000)::bigint, c.now + $2::interval
FROM (SELECT DISTINCT unnest($1::text[]) AS name ORDER BY 1) w,
    (SELECT clock_timestamp() AS now) c
ON CONFLICT (name) DO UPDATE SET
    notify_until = GREATEST(t.notify_until, excluded.notify_until)
