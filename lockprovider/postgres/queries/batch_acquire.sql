-- Acquire many names in one statement (AcquireBatch): acquire.sql over the
-- rows of arrays, with the same steps per name.
--   c     reads the server clock once for the whole batch.
--   i     the items, numbered (ord) so the answers come back in order.
--   snap  each existing row, as of the statement's snapshot, without a
--         lock; open as in acquire.sql.
--   cur   locks the open rows, in name order, skipping rows another
--         session has locked (acquire.sql's NOWAIT would fail the whole
--         batch on one such row); a skipped row is not granted and its
--         item reports "held by another", as acquire.sql's 55P03 does.
--         It looks up only the rows snap found open (the same snapshot,
--         so no other row could match): the batch of a replica that
--         finds every tick taken reads each row once, not twice.
--   up    inserts the fresh names and takes over the locked open rows,
--         in name order, so two batches of the same names never wait on
--         each other's inserts in a cycle. Its ON CONFLICT clause is
--         acquire.sql's own text (spliced in by batch.go), so the
--         takeover and fencing rules exist once.
-- The final rows carry acquire.sql's columns per item, decoded by the
-- same code. The ledger's CTEs (batch_ledger.sql) go before the final
-- SELECT.
-- $1 names, $2 owners, $3 locked_by, $4 at_most_for µs, $5 at_least_for µs,
-- $6 ticks (NULL for none): arrays of one length, names distinct.
WITH c AS MATERIALIZED (
    SELECT clock_timestamp() AS now
), i AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::timestamptz[])
        WITH ORDINALITY AS i(name, owner, locked_by, at_most, at_least, tick, ord)
), snap AS MATERIALIZED (
    SELECT t.name, t.owner, t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick,
        i.tick,
        t.lock_until <= c.now
            AND (i.tick IS NULL OR t.last_tick IS NULL OR t.last_tick < i.tick) AS open
    FROM {{.Locks}} t JOIN i ON t.name = i.name, c
), cur AS MATERIALIZED (
    SELECT t.name
    FROM snap JOIN {{.Locks}} t ON t.name = snap.name, c
    WHERE snap.open
      AND t.lock_until <= c.now
      AND (snap.tick IS NULL OR t.last_tick IS NULL OR t.last_tick < snap.tick)
    ORDER BY t.name
    FOR UPDATE OF t SKIP LOCKED
), up AS (
    INSERT INTO {{.Locks}} AS t
        (name, owner, locked_by, locked_at, lock_until, at_least_until, fence, last_tick)
    SELECT i.name, i.owner, i.locked_by, c.now,
        c.now + i.at_most * interval '1 microsecond', c.now + i.at_least * interval '1 microsecond',
        (extract(epoch FROM c.now) * 1000000)::bigint, i.tick
    FROM i, c
    WHERE NOT EXISTS (SELECT 1 FROM snap WHERE snap.name = i.name)
       OR EXISTS (SELECT 1 FROM cur WHERE cur.name = i.name)
    ORDER BY i.name
    ON_CONFLICT_OF_ACQUIRE_SQL
    RETURNING t.name, t.locked_at, t.lock_until, t.at_least_until, t.fence, t.last_tick
)
SELECT i.ord, up.fence IS NOT NULL,
    c.now,
    snap.owner,
    COALESCE(snap.open, false),
    COALESCE(up.locked_at, snap.locked_at),
    COALESCE(up.lock_until, snap.lock_until),
    COALESCE(up.at_least_until, snap.at_least_until),
    COALESCE(up.fence, snap.fence),
    CASE WHEN up.fence IS NOT NULL THEN up.last_tick ELSE snap.last_tick END
FROM i CROSS JOIN c LEFT JOIN up ON up.name = i.name LEFT JOIN snap ON snap.name = i.name
