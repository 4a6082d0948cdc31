-- Release: one UPDATE of a live lease held by the owner. The lease ends
-- now, or at its at_least_until bound if that lies ahead. When it ends now
-- and some process waits for the name (a live row in the waiters table, see
-- mark.sql), the same statement notifies (delivered at commit), payload the
-- lock name, on the channel baton_release:<lease table oid>: the oid,
-- unlike the table's name, is unique in the database, and NOTIFY channels
-- are database-wide. The waiters lookup runs only when the lease ends now.
-- $1 name, $2 owner.
UPDATE {{.Locks}} AS t SET
    lock_until = GREATEST(clock_timestamp(), t.at_least_until)
WHERE t.name = $1 AND t.owner = $2 AND t.lock_until > clock_timestamp()
RETURNING CASE WHEN t.at_least_until <= clock_timestamp()
        AND EXISTS (SELECT 1 FROM {{.Waiters}} w WHERE w.name = t.name AND w.until > clock_timestamp())
    THEN pg_notify('baton_release:' || t.tableoid::text, t.name) END IS NULL
