package mysql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/backenderr"
	"github.com/baton-go/baton/internal/backenderr/myerr"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/sqldb"
	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// DB is the part of database/sql the provider uses: ExecContext,
// QueryContext and QueryRowContext. *sql.DB, *sql.Conn and *sql.Tx
// satisfy it. The provider never closes it.
//
// Pass a *sql.DB (or a *sql.Conn) to run each operation in autocommit.
// Passing a *sql.Tx runs the operations inside that transaction: the
// leases become visible to others, and lasting, only when it commits.
type DB = sqldb.DB

// opError wraps a failed call once (see backenderr.Wrap), classified by
// myerr.Classify; acquireError is opError for an acquire, except that the
// refusal myerr.Contended finds is returned as such.
var (
	opError      = backenderr.Wrapper("mysql", myerr.Classify)
	acquireError = backenderr.AcquireWrapper(opError, myerr.Contended)
)

// Defaults of Config.
const (
	DefaultTable        = sqlprov.DefaultTable
	DefaultRateTable    = sqlprov.DefaultRateTable
	DefaultPollInterval = 25 * time.Millisecond
)

// Config configures a Provider. The zero value, or a nil *Config, is valid
// and means the documented defaults.
type Config struct {
	// Database qualifies the tables and procedures. Empty (the default)
	// leaves them unqualified, so the connection's current database
	// decides. Migrate does not create the database.
	Database string
	// Table is the lease table, at most 40 bytes of ASCII letters, digits
	// and underscores. Defaults to DefaultTable. The other tables and the
	// stored procedures are named after it (Table+"_runs", Table+"_acquire",
	// ...).
	Table string
	// RateTable is the rate-limit state table, at most 40 bytes. Defaults
	// to DefaultRateTable.
	RateTable string

	// PollInterval is how often the provider looks for released names
	// while some waiter is registered with NotifyRelease, and for control
	// changes while some watcher is registered with WatchControl (MySQL
	// has no LISTEN/NOTIFY). Defaults to DefaultPollInterval; between 5ms
	// and 1m.
	PollInterval time.Duration

	// Logger receives the poller's problems. Defaults to discarding.
	Logger *slog.Logger
}

// maxTableLen leaves room for the longest suffix of a derived name within
// the server's 64-byte limit.
const maxTableLen = 40

// Provider is a lockprovider.Provider on MySQL 8 or MariaDB 10.6+ tables
// and stored procedures. It implements every optional capability of
// package lockprovider. It is safe for concurrent use.
type Provider struct {
	db    DB
	log   *slog.Logger
	names names
	poll  time.Duration

	migrations []migration
	q          queries
	run        sqlprov.Ops // the operations the SQL providers share
	// noReturning is set once the server refused the single-statement
	// acquire (MySQL has no INSERT … RETURNING, nor SET STATEMENT): from
	// then on Acquire without a tick CALLs acquire_fast.
	noReturning atomic.Bool
	// hot runs the lock cycle's statements prepared; see sqldb.Prepared.
	hot *sqldb.Prepared

	watch *poller // see notify.go
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// names are the template fields of every SQL file: quoted, qualified
// identifiers.
type names struct {
	Database string // unquoted; empty for the connection's database
	table    string // unquoted lease table name
	rates    string // unquoted rate table name

	Locks    string // e.g. `db`.`baton_locks`
	Rates    string
	Runs     string // Locks with the suffix _runs: the run ledger
	Registry string // Locks with the suffix _reg: the job registry
	Paused   string // Locks with the suffix _paused: paused jobs
	RunQueue string // Locks with the suffix _runq: run requests
	Resumed  string // Locks with the suffix _resumed: each job's latest ended pause
	Waiters  string // Locks with the suffix _waiters: counter rows of announcements other than releases (control changes)
}

// proc returns the quoted, qualified name of the procedure suffix (e.g.
// "acquire" → `db`.`baton_locks_acquire`).
func (n names) proc(suffix string) string { return qualify(n.Database, n.table+"_"+suffix) }

// rateProc is proc for the rate table's procedures.
func (n names) rateProc(suffix string) string { return qualify(n.Database, n.rates+"_"+suffix) }

// queries are the statements the provider sends, each one round trip.
type queries struct {
	acquire, acquireFast, acquireUpsert, extend, release string
	inspect, list                                        string
	acquireBatch, releaseBatch                           string
	rateTake, rateSweep                                  string
	ops                                                  opsQueries
	control                                              controlQueries
}

type migration struct {
	name  string
	stmts []statement
}

// statement is one statement of a migration; proc is the unquoted name
// of the procedure it creates, if it creates one.
type statement struct {
	sql, proc string
}

// New returns a provider on db. cfg may be nil. It does not touch the
// database; call Migrate (or apply SchemaSQL) before the first Acquire.
func New(db DB, cfg *Config) (*Provider, error) {
	c, n, migs, err := sqlprov.New("mysql", db, cfg, resolveNames, renderMigrations)
	if err != nil {
		return nil, err
	}
	poll := c.PollInterval
	switch {
	case poll == 0:
		poll = DefaultPollInterval
	case poll < 5*time.Millisecond || poll > time.Minute:
		return nil, &batontype.ValidationError{Pkg: "mysql", Field: "PollInterval", Value: poll.String(), Reason: "must be between 5ms and 1m", Err: batontype.ErrInvalidDuration}
	}
	p := &Provider{db: db, log: defaults.Logger(c.Logger), names: n, poll: poll, migrations: migs}
	p.q = newQueries(n)
	p.hot = sqldb.NewPrepared(db, p.q.acquireUpsert, p.q.release)
	// The statements live on the server per connection until closed: a
	// provider no longer referenced closes them.
	runtime.AddCleanup(p, func(h *sqldb.Prepared) { h.Close() }, p.hot)
	p.run = sqlprov.Ops{Conn: sqldb.Conn{DB: p.hot}, NoRows: sql.ErrNoRows, Wrap: opError, Duration: micros}
	p.watch = newPoller(p)
	return p, nil
}

func newQueries(n names) queries {
	cols := "t.name, t.lock_until > UTC_TIMESTAMP(6), t.locked_by, " + us("t.locked_at") + ", " + us("t.lock_until") +
		", t.fence, " + us("t.last_tick") + ", " + us("t.at_least_until") + " FROM " + n.Locks + " t"
	return queries{
		acquire:     "CALL " + n.proc("acquire") + "(?, ?, ?, ?, ?, ?)",
		acquireFast: "CALL " + n.proc("acquire_fast") + "(?, ?, ?, ?, ?)",
		// acquire_fast as one statement, for MariaDB: no procedure to
		// enter, and SET STATEMENT cuts the lock wait for this statement
		// alone. UTC_TIMESTAMP(6) is the statement's start wherever it
		// appears, RETURNING reads the row as the statement left it, and
		// lock_until is assigned last so that every condition reads its
		// old value. Arguments: name, owner, locked_by, most, least, owner.
		acquireUpsert: "SET STATEMENT innodb_lock_wait_timeout = 0 FOR INSERT INTO " + n.Locks +
			" (name, owner, locked_by, locked_at, lock_until, at_least_until, fence)" +
			" VALUES (?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND," +
			" UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, " + us("UTC_TIMESTAMP(6)") + ")" +
			" ON DUPLICATE KEY UPDATE" +
			" owner = IF(lock_until <= UTC_TIMESTAMP(6), VALUES(owner), owner)," +
			" locked_by = IF(lock_until <= UTC_TIMESTAMP(6), VALUES(locked_by), locked_by)," +
			" locked_at = IF(lock_until <= UTC_TIMESTAMP(6), VALUES(locked_at), locked_at)," +
			" at_least_until = IF(lock_until <= UTC_TIMESTAMP(6), VALUES(at_least_until), at_least_until)," +
			" fence = IF(lock_until <= UTC_TIMESTAMP(6), GREATEST(fence + 1, " + us("UTC_TIMESTAMP(6)") + "), fence)," +
			" lock_until = IF(lock_until <= UTC_TIMESTAMP(6), VALUES(lock_until), lock_until)" +
			" RETURNING " + us("UTC_TIMESTAMP(6)") + ", owner = ? AND lock_until > UTC_TIMESTAMP(6), " +
			us("locked_at") + ", " + us("lock_until") + ", " + us("at_least_until") + ", fence",
		extend: "CALL " + n.proc("extend") + "(?, ?, ?, ?)",
		// The rel procedure's UPDATE. UTC_TIMESTAMP(6) is the statement's
		// start wherever it appears; the liveness check reads rowNow, the
		// time the row is locked. releases counts
		// the release only when the lease ends now (at_least_until
		// passed).
		release: "UPDATE " + n.Locks + " SET releases = releases + (at_least_until <= UTC_TIMESTAMP(6))," +
			" lock_until = GREATEST(UTC_TIMESTAMP(6), at_least_until), released_at = UTC_TIMESTAMP(6)" +
			" WHERE name = ? AND owner = ? AND lock_until > " + rowNow,
		acquireBatch: "CALL " + n.proc("acquire_batch") + "(?, ?, ?, ?, ?, ?)",
		releaseBatch: "CALL " + n.proc("release_batch") + "(?, ?)",
		rateTake:     "CALL " + n.rateProc("take") + "(?, ?, ?, ?, ?, ?)",
		rateSweep:    "CALL " + n.rateProc("sweep_now") + "(?)",
		inspect:      "SELECT " + cols + " WHERE t.name = ?",
		list:         "SELECT " + cols + " ORDER BY t.name",
		ops:          newOpsQueries(n),
		control:      newControlQueries(n),
	}
}

func resolveNames(c *Config) (names, error) {
	table, rates := sqlprov.Tables(c.Table, c.RateTable)
	if err := checkIdent("Table", table, maxTableLen); err != nil {
		return names{}, err
	}
	if err := checkIdent("RateTable", rates, maxTableLen); err != nil {
		return names{}, err
	}
	if c.Database != "" {
		if err := checkIdent("Database", c.Database, maxIdentLen); err != nil {
			return names{}, err
		}
	}
	d := c.Database
	return names{
		Database: d, table: table, rates: rates,
		Locks:    qualify(d, table),
		Rates:    qualify(d, rates),
		Runs:     qualify(d, table+"_runs"),
		Registry: qualify(d, table+"_reg"),
		Paused:   qualify(d, table+"_paused"),
		RunQueue: qualify(d, table+"_runq"),
		Resumed:  qualify(d, table+"_resumed"),
		Waiters:  qualify(d, table+"_waiters"),
	}, nil
}

// us is the SQL for a DATETIME(6) in UTC as microseconds since the Unix
// epoch (NULL stays NULL): pure DATETIME arithmetic, no time zone.
func us(expr string) string {
	return "TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', " + expr + ")"
}

// micros is a duration as the statements take it: microseconds.
func micros(d time.Duration) any { return d.Microseconds() }

// dt is the SQL for microseconds since the Unix epoch as a DATETIME(6) in
// UTC (NULL stays NULL).
func dt(expr string) string {
	return "(TIMESTAMP'1970-01-01 00:00:00' + INTERVAL " + expr + " MICROSECOND)"
}

// rowNow is the liveness check's clock: the time the row is locked, not
// the statement's start (see sqldb.RowNow).
var rowNow = sqldb.RowNow(6)

// delimiter ends each statement of a migration file: the files hold
// procedure bodies, whose own statements end with semicolons.
const delimiter = "\n//\n"

func renderMigrations(n names) ([]migration, error) {
	files, err := sqlprov.Files(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		"proc":     n.proc,
		"rateProc": n.rateProc,
		"us":       us,
		"dt":       dt,
		"rowNow":   func() string { return rowNow },
	}
	migs := make([]migration, 0, len(files))
	for _, f := range files {
		text, err := sqlprov.Render("mysql", f.Name, f.Text, funcs, n)
		if err != nil {
			return nil, err
		}
		m := migration{name: f.Name}
		for _, s := range strings.Split(text+"\n", delimiter) {
			s = strings.TrimSpace(s)
			if s == "" || onlyComments(s) {
				continue
			}
			m.stmts = append(m.stmts, statement{sql: s, proc: procName(s)})
		}
		migs = append(migs, m)
	}
	return migs, nil
}

func onlyComments(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "--") {
			return false
		}
	}
	return true
}

// procName returns the unquoted name of the procedure s creates, or "".
func procName(s string) string {
	i := strings.Index(s, "CREATE PROCEDURE ")
	if i < 0 {
		return ""
	}
	rest := s[i+len("CREATE PROCEDURE "):]
	end := strings.IndexByte(rest, '(')
	if end < 0 {
		return ""
	}
	q := rest[:end]
	if j := strings.LastIndex(q, "`.`"); j >= 0 {
		q = q[j+2:]
	}
	return strings.Trim(q, "`")
}

// Acquire implements lockprovider.Provider in one statement: without a
// tick, on MariaDB, one INSERT … ON DUPLICATE KEY UPDATE … RETURNING,
// otherwise one CALL. A contender that finds the row locked by another
// session's open transaction returns ErrNotAcquired at once instead of
// waiting.
func (p *Provider) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	var r acquireRow
	var err error
	if a.Tick.IsZero() {
		// No tick: a refusal can only mean "held by another owner".
		most, least := a.AtMostFor.Microseconds(), a.AtLeastFor.Microseconds()
		if !p.noReturning.Load() {
			err = p.hot.QueryRowContext(ctx, p.q.acquireUpsert, a.Name, a.Owner, a.LockedBy, most, least, a.Owner).
				Scan(r.dest()[:6]...)
			if myerr.SyntaxError(err) {
				// MySQL: the statement was refused unexecuted, so the
				// procedure may run it again.
				p.noReturning.Store(true)
			}
		}
		if p.noReturning.Load() {
			err = p.db.QueryRowContext(ctx, p.q.acquireFast, a.Name, a.Owner, a.LockedBy, most, least).Scan(r.dest()...)
		}
		if errors.Is(err, sql.ErrNoRows) {
			// The row was deleted between the upsert and the read.
			return batontype.Lease{}, batontype.ErrNotAcquired
		}
	} else {
		err = p.db.QueryRowContext(ctx, p.q.acquire, acquireArgs(a)...).Scan(r.dest()...)
	}
	if err != nil {
		return batontype.Lease{}, acquireError(a.Name, err)
	}
	return r.result(a)
}

func acquireArgs(a lockprovider.AcquireParams) []any {
	return []any{a.Name, a.Owner, a.LockedBy, a.AtMostFor.Microseconds(), a.AtLeastFor.Microseconds(), tickArg(a.Tick)}
}

// tickArg is a tick, or another optional time, as the statements take it:
// microseconds since the Unix epoch, or NULL for none.
func tickArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// acquireRow is the answer of the acquire procedure for one name.
type acquireRow struct {
	now                int64
	mine               bool // the row is a live lease of the caller's owner token
	at, until, atLeast sql.NullInt64
	fence              sql.NullInt64
	lastTick           sql.NullInt64
}

func (r *acquireRow) dest() []any {
	return []any{&r.now, &r.mine, &r.at, &r.until, &r.atLeast, &r.fence, &r.lastTick}
}

// nullables are r's fields after now, in the order of the procedures'
// answers.
func (r *acquireRow) nullables() []*sql.NullInt64 {
	return []*sql.NullInt64{&r.at, &r.until, &r.atLeast, &r.fence, &r.lastTick}
}

// result decodes r as the answer to a.
func (r *acquireRow) result(a lockprovider.AcquireParams) (batontype.Lease, error) {
	live := r.until.Valid && r.until.Int64 > r.now
	switch {
	case r.mine:
		// Granted by this call, or already ours: the same grant.
		l := batontype.Lease{
			Name: a.Name, Owner: a.Owner, Token: r.fence.Int64,
			GrantedAt: time.UnixMicro(r.at.Int64), Until: time.UnixMicro(r.until.Int64),
			AtLeastUntil: time.UnixMicro(r.atLeast.Int64),
		}
		if !a.Tick.IsZero() && r.lastTick.Valid {
			l.Tick = time.UnixMicro(r.lastTick.Int64)
		}
		return l, nil
	case live:
		return batontype.Lease{}, batontype.ErrNotAcquired
	case !a.Tick.IsZero() && r.lastTick.Valid && r.lastTick.Int64 >= a.Tick.UnixMicro():
		// Free, yet not granted: the tick is not newer than the last one.
		return batontype.Lease{}, batontype.ErrStaleTick
	default:
		// Free (and the tick newer), yet not granted: another session took
		// the name and let it go between this call's statements.
		return batontype.Lease{}, batontype.ErrNotAcquired
	}
}

// Extend implements lockprovider.Provider in one CALL. The returned
// Lease.Tick is the newest tick granted for the name (the table keeps no
// per-grant tick).
func (p *Provider) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	var (
		at, until, atLeast, fence int64
		lastTick                  sql.NullInt64
	)
	err := p.run.Row(ctx, e.Validate(), "extend", e.Name, batontype.ErrNotHeld,
		p.q.extend, []any{e.Name, e.Owner, e.AtMostFor.Microseconds(), e.AtLeastFor.Microseconds()},
		&at, &until, &atLeast, &fence, &lastTick)
	if err != nil {
		return batontype.Lease{}, err
	}
	l := batontype.Lease{Name: e.Name, Owner: e.Owner, Token: fence,
		GrantedAt: time.UnixMicro(at), Until: time.UnixMicro(until), AtLeastUntil: time.UnixMicro(atLeast)}
	if lastTick.Valid {
		l.Tick = time.UnixMicro(lastTick.Int64)
	}
	return l, nil
}

// Release implements lockprovider.Provider in one statement, an UPDATE
// of the lease row: the lease ends now, or at its AtLeastFor bound if that
// lies ahead, and when it ends now the row's release counter moves, which
// waiting providers poll (see NotifyRelease). Every release writes
// released_at, so a lease the owner held always counts as a changed row,
// whatever the client's CLIENT_FOUND_ROWS flag: no changed row means
// ErrNotHeld.
func (p *Provider) Release(ctx context.Context, r lockprovider.ReleaseParams) error {
	return p.run.Changed(ctx, r.Validate(), "release", r.Name, batontype.ErrNotHeld, p.q.release, r.Name, r.Owner)
}

// Inspect implements lockprovider.Inspector.
func (p *Provider) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	infos, err := p.infos(ctx, p.q.inspect, name)
	return sqlprov.Inspected(name, infos, err, opError)
}

// List implements lockprovider.Inspector. It reads the whole table, ordered
// by name (byte order).
func (p *Provider) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	infos, err := p.infos(ctx, p.q.list)
	if err != nil {
		return nil, opError("list", "", err)
	}
	return infos, nil
}

func (p *Provider) infos(ctx context.Context, query string, args ...any) ([]batontype.LeaseInfo, error) {
	rows, err := p.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []batontype.LeaseInfo
	for rows.Next() {
		i := batontype.LeaseInfo{Exists: true}
		var at, until, atLeast int64
		var lastTick sql.NullInt64
		if err := rows.Scan(&i.Name, &i.Held, &i.LockedBy, &at, &until, &i.Token, &lastTick, &atLeast); err != nil {
			return nil, err
		}
		i.GrantedAt, i.Until = time.UnixMicro(at), time.UnixMicro(until)
		if lastTick.Valid {
			i.LastTick = time.UnixMicro(lastTick.Int64)
		}
		i.AtLeastUntil = lockprovider.MinHold(i.GrantedAt, time.UnixMicro(atLeast))
		out = append(out, i)
	}
	return out, rows.Err()
}
