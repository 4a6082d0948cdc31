package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/backenderr"
	"github.com/baton-go/baton/internal/backenderr/pgerr"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/pgident"
	"github.com/baton-go/baton/internal/pglease"
	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// DB is the part of pgx the provider uses: Exec, Query and QueryRow.
// *pgxpool.Pool, *pgx.Conn and pgx.Tx satisfy it. The provider never
// closes it.
//
// Pass a pool (or a connection) to run each operation in autocommit. Passing
// a pgx.Tx runs the operations inside that transaction: the leases become
// visible to others, and lasting, only when it commits.
type DB = pglease.DB

// Default names.
const (
	DefaultTable     = sqlprov.DefaultTable
	DefaultRateTable = sqlprov.DefaultRateTable
)

// Config configures a Provider. The zero value, or a nil *Config, is valid
// and means the documented defaults.
type Config struct {
	// Schema qualifies the tables. Empty (the default) leaves them
	// unqualified, so the connection's search_path decides. Migrate does
	// not create the schema.
	Schema string
	// Table is the lease table, at most 55 bytes. Defaults to
	// DefaultTable. A second table, Table+"_waiters", records which names
	// have waiters (see NotifyRelease).
	Table string
	// RateTable is the rate-limit state table. Defaults to
	// DefaultRateTable.
	RateTable string
	// RateLogged makes the rate-limit table a regular (WAL-logged) table.
	// By default it is UNLOGGED: faster, not replicated, and emptied by
	// crash recovery, which at worst resets some limits.
	RateLogged bool

	// Listen opens the dedicated connection on which the provider LISTENs
	// for release notifications (see NotifyRelease). The provider closes
	// it when the last waiter stops. When nil and the DB is a
	// *pgxpool.Pool, the provider takes a connection out of the pool
	// (pgxpool.Conn.Hijack) for as long as waiters exist, so the pool's
	// own capacity is not reduced; otherwise NotifyRelease returns
	// ErrNoListener. The connection must resolve the table name as the DB
	// does (same search_path when Schema is empty); the provider sets a
	// short lock_timeout on it. Do not route it through a
	// transaction-pooling proxy (PgBouncer in transaction mode), which does
	// not keep LISTEN.
	Listen func(ctx context.Context) (*pgx.Conn, error)

	// Logger receives the listener's connection problems. Defaults to
	// discarding.
	Logger *slog.Logger
}

// ErrNoListener is returned by NotifyRelease when the provider has no way
// to open a listening connection: set Config.Listen, or pass a
// *pgxpool.Pool.
var ErrNoListener = errors.New("postgres: no connection for LISTEN (set Config.Listen or use a *pgxpool.Pool)")

// The waiters table is named after the lease table, within the 63-byte
// identifier limit.
const (
	waitersSuffix = "_waiters"
	maxTableLen   = 63 - len(waitersSuffix)
)

// Provider is a lockprovider.Provider on a PostgreSQL table. It also
// implements lockprovider.ReleaseNotifier and lockprovider.Inspector. It is
// safe for concurrent use.
type Provider struct {
	db    DB
	log   *slog.Logger
	names names

	acquireSQL, acquireTickSQL, extendSQL, releaseSQL, markSQL, inspectSQL, listSQL string
	migrations                                                                      []migration
	batchSQL, batchRunSQL, releaseBatchSQL, releaseRunBatchSQL                      string // see batch.go

	listen  *listener
	run     sqlprov.Ops    // the operations the SQL providers share
	ops     opsQueries     // see ops.go
	control controlQueries // see control.go
}

// Compile-time checks of the capabilities.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

//go:embed queries/*.sql
var queryFS embed.FS

// names are the template fields of every SQL file: quoted,
// schema-qualified identifiers.
type names struct {
	Locks      string // e.g. "public"."baton_locks"
	Waiters    string // Locks with the suffix _waiters
	Rates      string
	RateLogged bool
	Runs       string // Locks with the suffix _runs: the run ledger
	Registry   string // Locks with the suffix _reg: the job registry
	Paused     string // Locks with the suffix _paused: paused jobs (control.go)
	RunQueue   string // Locks with the suffix _runq: run requests (control.go)
	Resumed    string // Locks with the suffix _resumed: each job's latest ended pause (control.go)
}

type migration struct {
	name string
	sql  string
}

// New returns a provider on db. cfg may be nil. It does not touch the
// database; call Migrate (or apply SchemaSQL) before the first Acquire.
func New(db DB, cfg *Config) (*Provider, error) {
	c, n, migs, err := sqlprov.New("postgres", db, cfg, resolveNames, renderMigrations)
	if err != nil {
		return nil, err
	}
	p := &Provider{
		db:         db,
		log:        defaults.Logger(c.Logger),
		names:      n,
		migrations: migs,
		run:        sqlprov.Ops{Conn: pglease.Conn{DB: db}, NoRows: pgx.ErrNoRows, Wrap: opError, Duration: func(d time.Duration) any { return d }},
	}
	for _, q := range []struct {
		file string
		dst  *string
	}{
		{"acquire_fast.sql", &p.acquireSQL},
		{"acquire.sql", &p.acquireTickSQL},
		{"extend.sql", &p.extendSQL},
		{"release.sql", &p.releaseSQL},
		{"mark.sql", &p.markSQL},
		{"inspect.sql", &p.inspectSQL},
		{"list.sql", &p.listSQL},
	} {
		b, err := queryFS.ReadFile("queries/" + q.file)
		if err != nil {
			return nil, err
		}
		if *q.dst, err = render(q.file, string(b), n); err != nil {
			return nil, err
		}
	}
	p.listen = newListener(p, db, c.Listen)
	if err := p.ops.render(p); err != nil {
		return nil, err
	}
	if err := p.control.render(p); err != nil {
		return nil, err
	}
	if err := p.renderBatch(); err != nil {
		return nil, err
	}
	return p, nil
}

func resolveNames(c *Config) (names, error) {
	table, rates := sqlprov.Tables(c.Table, c.RateTable)
	for _, f := range []struct{ field, v string }{{"Table", table}, {"RateTable", rates}} {
		if err := pgident.Check(f.field, f.v); err != nil {
			return names{}, err
		}
	}
	if len(table) > maxTableLen {
		return names{}, &batontype.ValidationError{Pkg: "postgres",
			Field: "Table", Value: strconv.Quote(table),
			Reason: fmt.Sprintf("must be at most %d bytes (the waiters table adds %q)", maxTableLen, waitersSuffix),
			Err:    batontype.ErrInvalid,
		}
	}
	if c.Schema != "" {
		if err := pgident.Check("Schema", c.Schema); err != nil {
			return names{}, err
		}
	}
	n := names{RateLogged: c.RateLogged}
	n.Locks = pgident.Qualify(c.Schema, table)
	n.Waiters = pgident.Qualify(c.Schema, table+waitersSuffix)
	n.Rates = pgident.Qualify(c.Schema, rates)
	n.Runs = pgident.Qualify(c.Schema, table+runsSuffix)
	n.Registry = pgident.Qualify(c.Schema, table+registrySuffix)
	n.Paused = pgident.Qualify(c.Schema, table+pausedSuffix)
	n.RunQueue = pgident.Qualify(c.Schema, table+runQueueSuffix)
	n.Resumed = pgident.Qualify(c.Schema, table+resumedSuffix)
	return n, nil
}

func render(name, text string, n names) (string, error) {
	return sqlprov.Render("postgres", name, text, nil, n)
}

func renderMigrations(n names) ([]migration, error) {
	files, err := sqlprov.Files(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	migs := make([]migration, 0, len(files))
	for _, f := range files {
		s, err := render(f.Name, f.Text, n)
		if err != nil {
			return nil, err
		}
		migs = append(migs, migration{name: f.Name, sql: s})
	}
	return migs, nil
}

// Acquire implements lockprovider.Provider in one statement. A contender
// that finds the row locked by another session's open transaction returns
// ErrNotAcquired at once instead of waiting; so does a serialization
// failure when db is a REPEATABLE READ or SERIALIZABLE transaction.
func (p *Provider) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	if !a.Tick.IsZero() {
		return p.acquireTick(ctx, a)
	}
	// No tick: a refusal can only mean "held by another owner", and the
	// grant is for no tick (Lease.Tick stays zero).
	l := batontype.Lease{Name: a.Name, Owner: a.Owner}
	err := p.db.QueryRow(ctx, p.acquireSQL, a.Name, a.Owner, a.LockedBy, a.AtMostFor, a.AtLeastFor).
		Scan(&l.GrantedAt, &l.Until, &l.AtLeastUntil, &l.Token)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return batontype.Lease{}, batontype.ErrNotAcquired
	case err != nil:
		return batontype.Lease{}, acquireError(a.Name, err)
	}
	return l, nil
}

// acquireTick is Acquire with a tick, which must tell a stale tick from a
// lease held by another owner.
func (p *Provider) acquireTick(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	return p.acquireWith(ctx, p.acquireTickSQL, a, a.Name, a.Owner, a.LockedBy, a.AtMostFor, a.AtLeastFor, a.Tick)
}

// acquireWith runs acquire.sql, or a statement that extends it (the
// ledger's), with args, and decodes its answer.
func (p *Provider) acquireWith(ctx context.Context, sql string, a lockprovider.AcquireParams, args ...any) (batontype.Lease, error) {
	var r acquireRow
	if err := p.db.QueryRow(ctx, sql, args...).Scan(r.dest()...); err != nil {
		return batontype.Lease{}, acquireError(a.Name, err)
	}
	return r.result(a)
}

// acquireRow is the answer of acquire.sql for one name (also one row of
// batch_acquire.sql's).
type acquireRow struct {
	granted, open      bool
	now                time.Time
	curOwner           pgtype.Text
	at, until, atLeast pgtype.Timestamptz
	fence              pgtype.Int8
	lastTick           pgtype.Timestamptz
}

func (r *acquireRow) dest() []any {
	return []any{&r.granted, &r.now, &r.curOwner, &r.open, &r.at, &r.until, &r.atLeast, &r.fence, &r.lastTick}
}

// result decodes r as the answer to a.
func (r *acquireRow) result(a lockprovider.AcquireParams) (batontype.Lease, error) {
	granted, open, now, curOwner, until := r.granted, r.open, r.now, r.curOwner, r.until
	lease := func() batontype.Lease {
		l := batontype.Lease{
			Name: a.Name, Owner: a.Owner, Token: r.fence.Int64,
			GrantedAt: r.at.Time, Until: r.until.Time, AtLeastUntil: r.atLeast.Time,
		}
		if r.lastTick.Valid {
			l.Tick = r.lastTick.Time
		}
		return l
	}
	switch {
	case granted:
		return lease(), nil
	case !curOwner.Valid:
		// The row did not exist when the statement started, and a
		// concurrent insert of the same name won.
		return batontype.Lease{}, batontype.ErrNotAcquired
	case until.Time.After(now):
		if curOwner.String == a.Owner {
			return lease(), nil // already ours: the same grant, unchanged
		}
		return batontype.Lease{}, batontype.ErrNotAcquired
	case open:
		// Free and the tick newer when the statement started, yet another
		// session changed the row before this one could lock it: it took
		// the name.
		return batontype.Lease{}, batontype.ErrNotAcquired
	default:
		// Free, yet not granted: only the tick condition can refuse.
		return batontype.Lease{}, batontype.ErrStaleTick
	}
}

// opError wraps a failed call once (see backenderr.Wrap), classified by
// pgerr.Classify; acquireError is opError for an acquire, except that the
// refusal pglease.Contended finds is returned as such.
var (
	opError      = backenderr.Wrapper("postgres", pgerr.Classify)
	acquireError = backenderr.AcquireWrapper(opError, pglease.Contended)
)

// Extend implements lockprovider.Provider in one UPDATE. The returned
// Lease.Tick is the newest tick granted for the name (the table keeps no
// per-grant tick), which is the lease's own tick when it was granted for
// one.
func (p *Provider) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, e.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	// Exec mode: one round trip even on a connection that has never run
	// the statement (the default mode prepares it first, a second round
	// trip), so a renewal after a reconnect is not slower than the others.
	return pglease.Extend(ctx, p.db, p.extendSQL, e,
		func(err error) error { return opError("extend", e.Name, err) }, pgx.QueryExecModeExec)
}

// Release implements lockprovider.Provider in one statement, which also
// notifies waiters (see NotifyRelease) when the lease ends at once.
func (p *Provider) Release(ctx context.Context, r lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, r.Validate()); err != nil {
		return err
	}
	// Exec: the row count is the answer; the RETURNING clause is there for
	// its pg_notify side effect only.
	return pglease.Release(ctx, p.db, p.releaseSQL, r, func(err error) error { return opError("release", r.Name, err) })
}

// Inspect implements lockprovider.Inspector.
func (p *Provider) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	rows, err := p.db.Query(ctx, p.inspectSQL, name)
	if err != nil {
		return batontype.LeaseInfo{}, opError("inspect", name, err)
	}
	infos, err := collectInfos(rows)
	return sqlprov.Inspected(name, infos, err, opError)
}

// List implements lockprovider.Inspector. It reads the whole table, ordered
// by name.
func (p *Provider) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	rows, err := p.db.Query(ctx, p.listSQL)
	if err != nil {
		return nil, opError("list", "", err)
	}
	infos, err := collectInfos(rows)
	if err != nil {
		return nil, opError("list", "", err)
	}
	return infos, nil
}

func collectInfos(rows pgx.Rows) ([]batontype.LeaseInfo, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (batontype.LeaseInfo, error) {
		var (
			i        = batontype.LeaseInfo{Exists: true}
			lastTick pgtype.Timestamptz
		)
		var atLeast time.Time
		err := row.Scan(&i.Name, &i.Held, &i.LockedBy, &i.GrantedAt, &i.Until, &i.Token, &lastTick, &atLeast)
		if lastTick.Valid {
			i.LastTick = lastTick.Time
		}
		i.AtLeastUntil = lockprovider.MinHold(i.GrantedAt, atLeast)
		return i, err
	})
}
