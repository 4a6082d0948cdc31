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
// A second, small table (Table+"_waiters": name, until) records the names
// some process waits on; see Release notifications.
//
// Provider.Migrate applies every embedded migrations/NNN_*.sql file in
// order, in one transaction under an advisory lock; each file is idempotent,
// so Migrate may run again, or from several processes at once.
// Provider.SchemaSQL and SchemaSQL return the same DDL for users who run
// their own migrations. Identifiers are validated and quoted; lock names
// reach SQL only as parameters.
//
// Rows are never deleted: a row keeps the fencing counter of its name. A new
// row starts its fence at the server time in microseconds, and every later
// grant, under the row lock, takes the larger of the previous token plus one
// and the server time in microseconds (never a sequence, whose values can
// regress against the expiry check). Tokens therefore keep increasing even
// if an operator deletes rows, and the token of a grant that was rolled back
// (see Round trips and transactions) is not issued again, as long as the
// server's clock does not step back and a name is granted less than a
// million times a second.
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
// transaction when the DB is a pool or a connection. Acquire is an INSERT
// ... ON CONFLICT DO UPDATE; an acquire with a tick wraps it in CTEs that
// also report why a refused acquire was refused (held, or stale tick).
// Before the upsert, Acquire locks an existing row with NOWAIT, and only a
// row it could take (lease ended) or its own: a contender never queues
// behind another session's open transaction on that row, it gets
// ErrNotAcquired at once, and a refused contender leaves the row unlocked,
// so it never makes another refused after the lease ended. The same holds for serialization failures
// (SQLSTATE 40001) and deadlocks (40P01). Only a brand-new name inserted by
// a still-open transaction makes a second inserter wait for that
// transaction.
//
// The DB may also be a pgx.Tx: the operations then take part in the caller's
// transaction and take effect only when it commits. Leases stay correct
// (clock_timestamp is not frozen), but other sessions see a grant only after
// the commit, and the row stays locked until then.
//
// A grant inside a transaction, and its fencing token, are valid only if
// that transaction commits. If it rolls back, the grant never happened:
// the name is free again at once, whatever the lease length, and work
// fenced with that token was not protected by the lock. The token itself is
// not issued again (the next grant's token is larger, see Schema), so a
// write the rolled-back holder already made with it loses to every later
// holder's, but nothing stopped another holder from working at the same
// time after the rollback. Commit the transaction before relying on the
// lock, or keep the lock and the guarded work in the same transaction.
//
// # Deadlines, outages and pool settings
//
// Every operation ends when its context does: pgx sets the context's
// deadline on the socket, so a server that stops answering costs a call its
// deadline and no more. pgx has no I/O timeout of its own: a call whose
// context has no deadline waits as long as the connection stays silent, so
// always pass one (baton.Locker and the scheduler do). A server that could
// not be reached or did not answer in time gives an error matching
// batontype.ErrUnavailable, never ErrNotAcquired: an
// *batontype.UnavailableError with NotSent set when pgx guarantees the
// statement never went out (a failed connection attempt, a closed pool),
// otherwise of unknown outcome.
//
// The listener (see Release notifications) connects and marks on a
// goroutine of its own and holds no lock while it waits on the network:
// each NotifyRelease waits for its own registration with its own context.
// It bounds each of its statements and connection attempts to 5 s, and
// never waits for pgx's clean-up of a dead connection (a cancel request sent
// down the dead path, which pgx bounds at 15 s).
//
// Extend runs in pgx's exec mode, one round trip even on a connection that
// never ran it (the default mode prepares a statement on first use, a second
// round trip), so renewals stay one round trip after reconnects; under
// 200 ms of latency per packet an auto-renewed 3 s lease was otherwise lost
// within 4.4 s. Acquire and Release keep the default cached statements:
// they are the throughput path, where the server reusing a prepared plan
// matters more than one extra round trip on a connection's first use. pgxpool
// pings a connection that was idle for more than a second before handing it
// out (pgxpool.Config.ShouldPing), which doubles the round trips of renewals
// spaced further apart; under latency set ShouldPing to ping only after
// longer idleness, and keep MinConns at one or more so a renewal does not
// also pay for a new connection.
//
// # Release notifications
//
// The Provider implements lockprovider.ReleaseNotifier with LISTEN/NOTIFY.
// The release statement itself notifies, payload the lock name, on the
// channel "baton_release:<oid of the lease table>" (NOTIFY channels are
// database-wide; the oid tells equally named tables of different schemas
// apart). NOTIFY makes every notifying commit queue on a cluster-wide lock
// (measured: an unconditional NOTIFY cut acquire+release throughput at 16
// workers by about 7x), so a release notifies only for names with a live
// row in the waiters table: NotifyRelease writes it, and the listener
// renews it every 10 s while waiters remain; it lapses 30 s after the last
// renewal. Waiter records never touch lease rows, so they never get in an
// Acquire's way. One listening connection per Provider serves all waiters;
// see Config.Listen for where it comes from.
//
// lockprovider.Control (cluster-wide pauses and run requests, in the tables
// Table+"_paused", Table+"_resumed" and Table+"_runq") announces its changes on the same
// channel, with a payload no lock name can have, so WatchControl shares the
// listening connection; every change is announced, as control changes are
// rare operator actions.
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
