-- Release: one UPDATE of a live lease held by the owner. The lease ends
-- now, or at its at_least_until bound if that lies ahead. When it ends now
-- and some process registered waiters for the name (notify_until, see
-- mark.sql), the same statement notifies them (delivered at commit) with
-- the lock name as payload.
-- $1 name, $2 owner, $3 notification channel.
UPDATE {{.Locks}} AS t SET
    lock_until = GREATEST(clock_timestamp(), t.at_least_until)
WHERE t.name = $1 AND t.owner = $2 AND t.lock_until > clock_timestamp()
RETURNING CASE WHEN t.at_least_until <= clock_timestamp() AND t.notify_until > clock_timestamp()
    THEN pg_notify($3, t.name) END IS NULL
