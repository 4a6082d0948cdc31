// Package mysql is a lockprovider.Provider on MySQL 8.0 and MariaDB 10.6
// or later, through database/sql and github.com/go-sql-driver/mysql. It
// implements every optional capability of package lockprovider: release
// notifications (by polling), inspection and listing, admin, the run
// ledger, the job registry, control, batch acquire and release, and rate
// limiting with all five algorithms. It is tested against MariaDB 10.11
// and written for MySQL 8 as well (see Differences between MySQL and
// MariaDB).
//
// # Schema
//
// Leases live in one table (Config.Table, default baton_locks, optionally
// qualified by Config.Database), one row per lock name:
//
//	name VARBINARY(200) PRIMARY KEY, owner VARBINARY(64), locked_by VARCHAR(255),
//	locked_at DATETIME(6), lock_until DATETIME(6), at_least_until DATETIME(6),
//	fence BIGINT, last_tick DATETIME(6), released_at DATETIME(6), releases BIGINT
//
// Beside it: Table+"_waiters" (the control-change counter, see Release
// notifications), Table+"_runs"
// (the run ledger), Table+"_reg" (the job registry), Table+"_paused",
// Table+"_resumed" and Table+"_runq" (control), and the rate table (Config.RateTable, default
// baton_rates). Every operation is a stored procedure named after its
// table (Table+"_acquire", RateTable+"_take", ...), which Migrate creates.
//
// Provider.Migrate applies every embedded migrations/NNN_*.sql file in
// order, serialised across processes by a named lock (GET_LOCK). MySQL
// commits DDL at once, so the migration is not one transaction; each
// statement is idempotent instead (CREATE TABLE IF NOT EXISTS), and a
// procedure is replaced only when its text changed, which a hash in its
// COMMENT tells, so running Migrate again costs one query and never
// removes a procedure that replicas are calling. Provider.SchemaSQL and
// SchemaSQL return the same DDL, in the form the mysql and mariadb clients
// read, for users who run their own migrations. The user needs the
// CREATE, ALTER (a runs table made by an older version gets columns),
// ALTER ROUTINE, CREATE ROUTINE and EXECUTE privileges; the
// procedures run with the caller's privileges (SQL SECURITY INVOKER).
// Identifiers are validated (ASCII letters, digits, underscores) and
// quoted; names and keys reach SQL only as parameters.
//
// Names, owners and keys are VARBINARY: compared byte by byte, with no
// collation, so no two distinct names ever match (a PAD SPACE collation
// would make "a" and "a " the same row). Rows are never deleted: a row
// keeps the fencing counter of its name. A new row starts its fence at the
// server time in microseconds, and every later grant, under the row lock,
// takes the larger of the previous token plus one and the server time in
// microseconds (never AUTO_INCREMENT, whose values can regress after a
// restart on old servers). Tokens therefore keep increasing even if an
// operator deletes rows, and the token of a grant rolled back with a
// caller's transaction is not issued again.
//
// # Clock
//
// Every time is the server's UTC_TIMESTAMP(6): UTC, to the microsecond,
// stored in DATETIME(6) columns and exchanged with the client as integer
// microseconds since the Unix epoch. The application's clock, the
// session's time_zone and the driver's loc and parseTime settings play no
// part. In MySQL and MariaDB the current time is the start of the
// statement that reads it, never of the transaction (PostgreSQL's now()
// is frozen for a transaction; MySQL's is not), and inside a stored
// procedure each statement reads its own; the procedures read it once
// into a variable and compute every time of an operation from it. One
// check is the exception: an Extend, a Release or a force-release asks
// whether the lease is live at the moment its row is locked (SYSDATE(6),
// brought to UTC), since a statement that waited for another's row lock
// sees the row as that one left it, and against the statement's start a
// lease ended in between would still look live.
//
// # Round trips and transactions
//
// Every operation is one CALL of a stored procedure (or one plain SELECT,
// UPDATE or DELETE), sent as one statement. On MariaDB, Acquire without a
// tick (the plain lock path) is no procedure but one INSERT … ON DUPLICATE
// KEY UPDATE … RETURNING, which answers the row as the statement left it;
// MySQL has neither RETURNING nor SET STATEMENT, refuses that statement
// unexecuted (a syntax error), and the provider then CALLs the procedure
// that does the same in two statements, from then on. Entering a
// procedure costs the server more than a bare statement: measured on
// MariaDB 10.11 (a loaded 2-core machine, make bench's lock-mysql at 16
// goroutines), the procedure's acquire and a release joined to a waiters
// table cost 1.6-1.8 times the CPU (client and server) of ShedLock-style
// INSERT … ON DUPLICATE KEY UPDATE and UPDATE statements, which issue no
// owner token, no fencing token and no lease times; the single statement
// and the single-table release 1.3 times, most of it the server parsing
// the long upsert at every call. On a *sql.DB the provider therefore runs
// the lock cycle's two statements (the acquire without a tick and the
// release) as server-side prepared statements: each is prepared once per
// connection of the pool (one more round trip, the first time a
// connection runs it) and then only executed, one round trip per call.
// That brought the cycle to about 0.95 times the raw statements sent as
// text (docs/benchmarks.md). A *sql.Tx or *sql.Conn gets text
// statements: a statement prepared on either would be bound to it. The
// prepared statements hold two of the server's max_prepared_stmt_count
// slots per connection and provider; they are closed when the provider is
// garbage collected, and by the server when a connection closes. Pass a
// DSN with interpolateParams=true: otherwise the driver prepares every
// other statement that has arguments at each call, a second round trip
// (the provider's arguments are integers, booleans and strings, which the
// driver escapes for the session's sql_mode).
//
// A procedure never starts a transaction: START TRANSACTION inside one
// would commit a caller's. In autocommit (a *sql.DB or *sql.Conn as the
// DB) each statement of a procedure is therefore its own transaction, and
// the procedures are written so that every step that decides is one
// atomic statement: Acquire's grant is one UPDATE of an ended lease (or
// one INSERT IGNORE of a new name; without a tick, one INSERT … ON
// DUPLICATE KEY UPDATE), whose row the procedure then reads back to
// answer; Extend is one UPDATE of a live lease held by the owner.
// Release needs no answer but the count of changed rows, so it is no
// procedure: one UPDATE of the lease row, which also counts the release
// for waiting providers (see Release notifications). Every
// release writes released_at, so a lease the owner held always counts as
// changed, whether or not the client set CLIENT_FOUND_ROWS. A rate-limit decision needs several statements (read
// every limit of the key, decide, write), so it holds a named lock of the
// key (GET_LOCK) for the length of the procedure: decisions on one key
// are serialised, decisions on different keys do not wait for each other.
//
// A contender never queues behind another session's open transaction on
// the row: it gets ErrNotAcquired at once (error 1205, or 3572 on MySQL).
// An autocommit statement is no exception: it waits for a row lock held
// by an open transaction (a provider on a *sql.Tx that acquired the name,
// or any transaction that wrote the row) for up to
// innodb_lock_wait_timeout, 50s by default. So the lock wait is cut to
// nothing (MariaDB; MySQL's minimum is one second) around the grant: on
// MariaDB's single-statement acquire by SET STATEMENT
// innodb_lock_wait_timeout = 0 FOR, for that statement alone; in the
// procedures by setting the session's variable and restoring it after,
// also on an error (SELECT ... NOWAIT is not allowed inside a MariaDB
// procedure, hence the variable). Deadlocks (1213) also mean
// ErrNotAcquired.
//
// The DB may also be a *sql.Tx: the operations then take part in the
// caller's transaction and take effect only when it commits. Leases stay
// correct (the clock is not frozen), but other sessions see a grant only
// after the commit, and the row stays locked until then. A grant inside a
// transaction that rolls back never happened: the name is free again at
// once, and the next grant's token is larger. Do not call Migrate with a
// *sql.Tx: DDL commits it.
//
// # Deadlines and outages
//
// Every operation ends when its context does; database/sql closes the
// connection of a cancelled call. A server that could not be reached or
// did not answer in time gives an error matching batontype.ErrUnavailable,
// never ErrNotAcquired: an *batontype.UnavailableError with NotSent set
// when the statement never went out (a failed dial, a closed handle,
// driver.ErrBadConn), otherwise of unknown outcome. Set the driver's
// readTimeout and writeTimeout, or always pass a context with a deadline
// (baton.Locker and the scheduler do).
//
// # Release notifications
//
// MySQL has no LISTEN/NOTIFY, so NotifyRelease polls, and costs nothing
// while no one waits. A release that ends the lease at once counts itself
// in the lease row it writes anyway (column releases), and a goroutine per
// Provider, running only while waiters exist, reads the counters of all
// its names every Config.PollInterval (default 25ms) in one statement, a
// lookup by primary key per name that takes no lock, and wakes the
// waiters of every name whose counter moved. A release therefore reaches
// a waiting process after up to one PollInterval, half of one on average;
// when several processes wait, the first to poll after the release takes
// the name, so the hand-off shrinks with their number. PostgreSQL's
// NOTIFY takes about a millisecond. lockprovider.Control announces its
// changes on a counter row of the waiters table, which the same statement
// reads, so WatchControl shares the poller.
//
// # Differences between MySQL and MariaDB
//
//   - TIMESTAMP(6) vs DATETIME(6): the tables use DATETIME(6) in UTC.
//     TIMESTAMP converts through the session's time zone (ambiguous in the
//     hour a daylight-saving change repeats), ends in 2038, and on MariaDB
//     (explicit_defaults_for_timestamp off by default) the first TIMESTAMP
//     column of a table silently gets DEFAULT CURRENT_TIMESTAMP ON UPDATE
//     CURRENT_TIMESTAMP.
//   - Session time zone: UTC_TIMESTAMP(6) and TIMESTAMPDIFF against the
//     epoch are independent of it; UNIX_TIMESTAMP(NOW(6)) would not be.
//   - CURRENT_TIMESTAMP(6) in a transaction: on both servers it is the
//     statement's start, not the transaction's, unlike PostgreSQL.
//   - NOWAIT and SKIP LOCKED: MariaDB refuses NOWAIT inside a procedure, so
//     the lock wait is cut with innodb_lock_wait_timeout, which MariaDB
//     accepts as 0 and MySQL raises to 1s. A refused lock wait is error
//     1205 on MariaDB, 3572 (NOWAIT) or 1205 on MySQL.
//   - RETURNING and SET STATEMENT: MariaDB has both, MySQL neither; on
//     MySQL the plain acquire is a procedure that reads its row back.
//   - JSON: MariaDB's JSON is text; the procedures use JSON_TABLE (MySQL
//     8.0.4, MariaDB 10.6) and cast extracted values, which both accept.
//   - VALUES() in ON DUPLICATE KEY UPDATE is deprecated in MySQL 8.0.20;
//     the procedures name their parameters instead (only MariaDB's
//     single-statement acquire uses VALUES()).
//   - ROW_COUNT() counts changed rows, or matched rows when the client set
//     CLIENT_FOUND_ROWS; no answer depends on which.
//
// # Failover
//
// Leases and fences are as durable as the commits that wrote them. With
// asynchronous replication a promoted replica may lack the latest grants,
// so a lease may be granted twice and a fencing token reissued; use
// semi-synchronous replication, and a failover manager that promotes only
// a replica that acknowledged every commit, if locks must survive
// failover. Read lease state (Inspect, List) on the primary only. Use
// row-based binary logging (MySQL 8's default): GET_LOCK, which the rate
// limiter uses, is unsafe for statement-based replication.
package mysql
