// Package postgres is a lockprovider.Provider on PostgreSQL, through pgx v5.
//
// # Schema
//
// Leases live in one table (Config.Table, default baton_locks, optionally
// schema-qualified), one row per lock name:
//
//	name text PRIMARY KEY, owner text, locked_by text, locked_at timestamptz,
//	lock_until timestamptz, at_least_until timestamptz, fence bigint,
//	last_tick timestamptz
//
// Provider.Migrate creates or upgrades it (idempotent, safe to run from
// several processes at once); Provider.SchemaSQL and SchemaSQL return the
// same DDL for users who run their own migrations. Identifiers are validated
// and quoted; lock names reach SQL only as parameters.
//
// Rows are never deleted: a row keeps the fencing counter of its name. A new
// row starts its fence at the server time in microseconds, and every later
// grant adds one under the row lock (never a sequence, whose values can
// regress against the expiry check), so tokens keep increasing even if an
// operator deletes rows.
//
// # Clock
//
// Every time is the database server's clock_timestamp(), read once per
// statement, at microsecond precision. The application's clock and the
// session TimeZone play no part. now() and CURRENT_TIMESTAMP are never used:
// they are frozen at the start of the transaction, so an acquire issued in a
// transaction opened earlier than the lease length would be born expired.
//
// # Round trips and transactions
//
// Acquire, Extend and Release are each one statement, which is its own
// transaction when the DB is a pool or a connection. Acquire locks an
// existing row with NOWAIT: a contender never queues behind another
// session's open transaction on that row, it gets ErrNotAcquired at once.
// The same holds for serialization failures (SQLSTATE 40001) and deadlocks
// (40P01). Only a brand-new name inserted by a still-open transaction makes
// a second inserter wait for that transaction.
//
// The DB may also be a pgx.Tx: the operations then take part in the caller's
// transaction and take effect only when it commits. Leases stay correct
// (clock_timestamp is not frozen), but other sessions see a grant only after
// the commit, and the row stays locked until then.
//
// # Release notifications
//
// Release notifies the channel "baton_release:<table>" (hashed when longer
// than 63 bytes) with the lock name as payload when a lease ends at once, in
// the same statement. The Provider implements lockprovider.ReleaseNotifier on
// one shared LISTEN connection, opened while waiters exist; see
// Config.Listen for where that connection comes from.
//
// # Failover
//
// Leases and fences are as durable as the commits that wrote them. With
// asynchronous streaming replication a promoted standby may lack the latest
// grants, so a lease may be granted twice and a fencing token reissued. Use
// synchronous replication (synchronous_commit on or remote_apply, and a
// failover manager that promotes only an in-sync standby) if locks must
// survive failover; otherwise the guarantee is "single primary". Read lease
// state (Inspect, List) on the primary only. NOTIFY is not replicated, and
// a listener reconnecting after failover wakes all its waiters.
package postgres
