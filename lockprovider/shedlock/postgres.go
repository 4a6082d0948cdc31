package shedlock

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/pgident"
	"github.com/baton-go/baton/internal/pglease"
	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// DB is the part of pgx the provider uses: Exec, Query and QueryRow.
// *pgxpool.Pool, *pgx.Conn and pgx.Tx satisfy it; it is the native
// provider's postgres.DB.
type DB = pglease.DB

// defaultNativeTable is the native provider's default table (postgres.DefaultTable),
// where ExportTokens carries the tokens when not told another.
const defaultNativeTable = sqlprov.DefaultTable

// DefaultTable is ShedLock's default table name.
const DefaultTable = "shedlock"

// PostgresConfig configures a Postgres provider. TimeMode has no default
// and must be set; the other fields default as documented.
type PostgresConfig struct {
	// Schema qualifies Table. Empty leaves it unqualified, so the
	// connection's search_path decides (as for the Java fleet).
	Schema string
	// Table is ShedLock's table. Defaults to DefaultTable ("shedlock").
	Table string

	// TimeMode is how the Java fleet is configured (required).
	TimeMode TimeMode
	// JavaZone is the JVMs' default time zone: required with
	// ClientTimeZone, and with DBTime on timestamptz columns (it must
	// then be UTC). Use time.LoadLocation("America/New_York"), never
	// time.Local. Nil (the default) means not given: fine for the other
	// modes, refused with ErrTimeMode where it is required.
	JavaZone *time.Location
	// Columns is the type of lock_until and locked_at. The zero value
	// reads it from the catalog in Migrate or Check. Migrate creates a
	// missing table with this type (timestamp when not set).
	Columns ColumnType

	// LockedBy is written to locked_by (followed by '#' and the owner
	// token) when AcquireParams.LockedBy is empty. Defaults to the host
	// name.
	LockedBy string

	// PollInterval is how often NotifyRelease reads the awaited names.
	// Defaults to DefaultPollInterval.
	PollInterval time.Duration

	// Logger receives failures of the NotifyRelease poll. Nil discards.
	Logger *slog.Logger
}

// Postgres is a lockprovider.Provider on ShedLock's JDBC table, sharing
// its locks with the Java replicas that use that table. It also implements
// lockprovider.Inspector and lockprovider.ReleaseNotifier. It is safe for
// concurrent use.
type Postgres struct {
	db       DB
	cfg      PostgresConfig
	table    string // quoted, qualified
	lockedBy string
	poll     *poller

	mu      sync.RWMutex
	q       *queries // nil until the column type is known
	refused error    // the last Check's refusal, until a Check passes
}

var (
	_ lockprovider.Provider        = (*Postgres)(nil)
	_ lockprovider.Inspector       = (*Postgres)(nil)
	_ lockprovider.ReleaseNotifier = (*Postgres)(nil)
)

type queries struct {
	rep                               representation
	cols                              ColumnType
	acquire, extend, release, inspect string
}

//go:embed sql/*.sql
var sqlFS embed.FS

// ErrNotReady is returned by the operations of a Postgres provider whose
// column type is still unknown (call Migrate or Check first), or whose
// last Check refused the table or the configuration (see Check).
var ErrNotReady = errors.New("shedlock: column type not known yet (call Migrate or Check before use)")

// refusedError is what the operations of a provider return after Check
// refused it (see Check).
type refusedError struct{ err error }

func (e *refusedError) Error() string {
	return "shedlock: refused by the last Check (fix, then call Check again): " + e.err.Error()
}

func (e *refusedError) Unwrap() []error { return []error{ErrNotReady, e.err} }

// NewPostgres returns a provider on ShedLock's table behind db. It refuses
// a time configuration that cannot be read back safely (ErrTimeMode). It
// does not touch the database: call Migrate (or Check, when the extra
// columns were added by your own migrations) before the first Acquire.
// A nil config is the zero PostgresConfig, which is refused: TimeMode is
// required. NewPostgres copies config.
func NewPostgres(db DB, config *PostgresConfig) (*Postgres, error) {
	var cfg PostgresConfig // nil config: every field at its default
	if config != nil {
		cfg = *config
	}
	if db == nil {
		return nil, &batontype.ValidationError{Pkg: "shedlock", Field: "db", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	table, err := qualify(cfg.Schema, cfg.Table)
	if err != nil {
		return nil, err
	}
	switch cfg.Columns {
	case DetectColumns, Timestamp, Timestamptz:
	default:
		return nil, &batontype.ValidationError{Pkg: "shedlock", Field: "Columns", Value: cfg.Columns.String(), Reason: "unknown column type", Err: batontype.ErrInvalid}
	}
	// Refuse a bad time configuration now; with DetectColumns, Check
	// repeats this for the type it finds.
	if _, err := resolveRepresentation(cfg.TimeMode, cfg.JavaZone, max(cfg.Columns, Timestamp)); err != nil {
		return nil, err
	}
	if cfg.PollInterval, err = pollInterval(cfg.PollInterval); err != nil {
		return nil, err
	}
	cfg.Logger = defaults.Logger(cfg.Logger)
	p := &Postgres{db: db, cfg: cfg, table: table}
	if p.lockedBy, err = lockedByOf(cfg.LockedBy); err != nil {
		return nil, err
	}
	if cfg.Columns != DetectColumns {
		if p.q, err = p.render(cfg.Columns); err != nil {
			return nil, err
		}
	}
	p.poll = newPoller(cfg.PollInterval, p.states, cfg.Logger)
	return p, nil
}

func qualify(schema, table string) (string, error) {
	if err := pgident.Check("Table", table); err != nil {
		return "", err
	}
	if schema != "" {
		if err := pgident.Check("Schema", schema); err != nil {
			return "", err
		}
	}
	return pgident.Qualify(schema, table), nil
}

type tmplData struct {
	Table, Native, Cols string
}

func renderSQL(file string, rep representation, data tmplData) (string, error) {
	b, err := sqlFS.ReadFile("sql/" + file)
	if err != nil {
		return "", err
	}
	return sqlprov.Render("shedlock", file, string(b), template.FuncMap{
		"wall": rep.wall, "until": rep.until, "inst": rep.inst,
	}, data)
}

func (p *Postgres) render(cols ColumnType) (*queries, error) {
	rep, err := resolveRepresentation(p.cfg.TimeMode, p.cfg.JavaZone, cols)
	if err != nil {
		return nil, err
	}
	q := &queries{rep: rep, cols: cols}
	for _, f := range []struct {
		file string
		dst  *string
	}{
		{"acquire.sql", &q.acquire}, {"extend.sql", &q.extend},
		{"release.sql", &q.release}, {"inspect.sql", &q.inspect},
	} {
		if *f.dst, err = renderSQL(f.file, rep, tmplData{Table: p.table}); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// migrateLock serialises concurrent Migrate calls across processes.
const migrateLock = "SELECT pg_advisory_xact_lock(hashtext('github.com/baton-go/baton shedlock migrate'))"

// Migrate creates ShedLock's table if it is missing, adds the columns this
// provider needs and ShedLock ignores (owner, at_least_until, fence,
// last_tick), and then runs Check. It is idempotent and safe to run from
// several processes at once. Adding the columns takes a short ACCESS
// EXCLUSIVE lock on the table, during which Java lock statements wait.
func (p *Postgres) Migrate(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	s, err := p.SchemaSQL()
	if err != nil {
		return err
	}
	if _, err := p.db.Exec(ctx, migrateLock+";\n"+s); err != nil {
		return fmt.Errorf("shedlock: migrate: %w", err)
	}
	return p.Check(ctx)
}

// SchemaSQL returns the DDL that Migrate applies, for users who run their
// own migration tool (then call Check instead of Migrate).
func (p *Postgres) SchemaSQL() (string, error) {
	cols := p.cfg.Columns
	if cols == DetectColumns {
		cols = Timestamp
	}
	var b strings.Builder
	for _, f := range []string{"create.sql", "migrate.sql"} {
		s, err := renderSQL(f, representation{}, tmplData{Table: p.table, Cols: cols.String()})
		if err != nil {
			return "", err
		}
		b.WriteString(strings.TrimSpace(s))
		b.WriteString(";\n")
	}
	return b.String(), nil
}

// Check reads the table's columns from the catalog: the type of lock_until
// and locked_at (which must agree with Config.Columns when set) and the
// presence of the extra columns. It also has the server resolve JavaZone.
// After Check the provider is ready.
//
// When Check refuses the table or the configuration (a missing table or
// column, a column type that contradicts Config.Columns or the time mode,
// a zone the server does not know), every operation that reads or writes
// the table returns an error matching ErrNotReady and the refusal's own
// sentinels (ErrTimeMode, batontype.ErrInvalid, ...) until a later Check
// passes, even when Config.Columns had made the provider usable before
// any Check: a caller that ignores the refusal must not take locks whose
// times it may misread. An error that says nothing about the table (the
// database unreachable, the caller's context ending) leaves the provider
// as it was.
func (p *Postgres) Check(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	q, err := p.check(ctx)
	var v verdict
	switch {
	case err == nil:
		p.mu.Lock()
		p.q, p.refused = q, nil
		p.mu.Unlock()
	case errors.As(err, &v):
		err = v.err
		p.mu.Lock()
		p.refused = &refusedError{err}
		p.mu.Unlock()
	}
	return err
}

// verdict marks check's refusals, as opposed to failures to read the
// catalog.
type verdict struct{ err error }

func (v verdict) Error() string { return v.err.Error() }

// check is Check's work: the queries for the table, or an error, a
// verdict when the table or the configuration is refused.
func (p *Postgres) check(ctx context.Context) (*queries, error) {
	refuse := func(err error) (*queries, error) { return nil, verdict{err} }
	rows, err := p.db.Query(ctx, mustSQL("columns.sql"), p.table)
	if err != nil {
		return nil, fmt.Errorf("shedlock: check %s: %w", p.table, err)
	}
	types := map[string]string{}
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			rows.Close()
			return nil, fmt.Errorf("shedlock: check %s: %w", p.table, err)
		}
		types[n] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shedlock: check %s: %w", p.table, err)
	}
	if len(types) == 0 {
		return refuse(fmt.Errorf("shedlock: table %s does not exist (run Migrate)", p.table))
	}
	var cols ColumnType
	for _, c := range []string{"lock_until", "locked_at"} {
		var ct ColumnType
		switch t := types[c]; {
		case strings.HasPrefix(t, "timestamp with time zone"):
			ct = Timestamptz
		case strings.HasPrefix(t, "timestamp"):
			ct = Timestamp
		default:
			return refuse(fmt.Errorf("shedlock: column %s of %s has type %q, want timestamp or timestamptz", c, p.table, t))
		}
		if cols != DetectColumns && ct != cols {
			return refuse(fmt.Errorf("shedlock: lock_until and locked_at of %s have different types", p.table))
		}
		cols = ct
	}
	if p.cfg.Columns != DetectColumns && p.cfg.Columns != cols {
		return refuse(&batontype.ValidationError{Pkg: "shedlock", Field: "Columns", Value: p.cfg.Columns.String(),
			Reason: "the table's columns are " + cols.String(), Err: ErrTimeMode})
	}
	for _, c := range []string{"name", "locked_by", "owner", "at_least_until", "fence", "last_tick"} {
		if _, ok := types[c]; !ok {
			return refuse(fmt.Errorf("shedlock: table %s has no column %s (run Migrate)", p.table, c))
		}
	}
	q, err := p.render(cols)
	if err != nil {
		return refuse(err)
	}
	if z := q.rep.wallZone; z != "" {
		var ok bool
		if err := p.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1)", z).Scan(&ok); err != nil {
			return nil, fmt.Errorf("shedlock: check time zone: %w", err)
		}
		if !ok {
			return refuse(timeError("JavaZone", z, "is unknown to the PostgreSQL server"))
		}
	}
	return q, nil
}

func mustSQL(file string) string {
	b, _ := sqlFS.ReadFile("sql/" + file) // embedded: cannot fail
	return string(b)
}

func (p *Postgres) queries() (*queries, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch {
	case p.refused != nil:
		return nil, p.refused
	case p.q == nil:
		return nil, ErrNotReady
	}
	return p.q, nil
}

// Acquire implements lockprovider.Provider in one statement.
func (p *Postgres) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	q, err := p.queries()
	if err != nil {
		return batontype.Lease{}, err
	}
	var tick any
	if !a.Tick.IsZero() {
		tick = a.Tick
	}
	var (
		granted, existed, mine bool
		open                   bool
		held                   pgtype.Bool
		at, until, atLeast     pgtype.Timestamptz
		fence                  pgtype.Int8
		lastTick               pgtype.Timestamptz
	)
	err = p.db.QueryRow(ctx, q.acquire, a.Name, a.Owner, holderText(infoOf(a, p.lockedBy), a.Owner), a.AtMostFor, a.AtLeastFor, tick).
		Scan(&granted, &existed, &held, &mine, &open, &at, &until, &atLeast, &fence, &lastTick)
	if err != nil {
		if refused := pglease.Contended(err); refused != nil {
			return batontype.Lease{}, refused
		}
		return batontype.Lease{}, pgError("acquire", a.Name, err)
	}
	// open: free and the tick newer when the statement started, yet not
	// granted, so another session locked or changed the row first.
	seen := acquired{granted: granted || held.Bool && mine, existed: existed, held: held.Bool, raced: open, ticked: tick != nil}
	if err := seen.refusal(); err != nil {
		return batontype.Lease{}, err
	}
	l := batontype.Lease{
		Name: a.Name, Owner: a.Owner, Token: fence.Int64,
		GrantedAt: at.Time, Until: until.Time, AtLeastUntil: atLeast.Time,
	}
	if tick != nil && lastTick.Valid {
		l.Tick = lastTick.Time
	}
	return l, nil
}

// Extend implements lockprovider.Provider in one UPDATE.
func (p *Postgres) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, e.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	q, err := p.queries()
	if err != nil {
		return batontype.Lease{}, err
	}
	return pglease.Extend(ctx, p.db, q.extend, e, func(err error) error { return pgError("extend", e.Name, err) })
}

// Release implements lockprovider.Provider in one UPDATE.
func (p *Postgres) Release(ctx context.Context, r lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, r.Validate()); err != nil {
		return err
	}
	q, err := p.queries()
	if err != nil {
		return err
	}
	return pglease.Release(ctx, p.db, q.release, r, func(err error) error { return pgError("release", r.Name, err) })
}

// Inspect implements lockprovider.Inspector. Rows of Java grants report
// the Java host as LockedBy and Token 0 unless a Go replica held the name
// before.
func (p *Postgres) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	infos, err := p.read(ctx, []string{name})
	if err != nil {
		return batontype.LeaseInfo{}, pgError("inspect", name, err)
	}
	if len(infos) == 0 {
		return batontype.LeaseInfo{Name: name}, nil
	}
	return infos[0], nil
}

// List implements lockprovider.Inspector: every row, ordered by name.
func (p *Postgres) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	infos, err := p.read(ctx, nil)
	if err != nil {
		return nil, pgError("list", p.table, err)
	}
	return infos, nil
}

func (p *Postgres) read(ctx context.Context, names []string) ([]batontype.LeaseInfo, error) {
	q, err := p.queries()
	if err != nil {
		return nil, err
	}
	rows, err := p.db.Query(ctx, q.inspect, names)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (batontype.LeaseInfo, error) {
		var (
			i               = batontype.LeaseInfo{Exists: true}
			owner           pgtype.Text
			lastTick        pgtype.Timestamptz
			lockedAt, until time.Time
		)
		err := row.Scan(&i.Name, &i.Held, &i.LockedBy, &owner, &lockedAt, &until, &i.Token, &lastTick)
		i.GrantedAt, i.Until = lockedAt, until
		if owner.Valid {
			i.LockedBy = strings.TrimSuffix(i.LockedBy, "#"+owner.String)
		}
		if lastTick.Valid {
			i.LastTick = lastTick.Time
		}
		return i, err
	})
}

// NotifyRelease implements lockprovider.ReleaseNotifier by polling (see
// PostgresConfig.PollInterval): Java replicas send no notifications, so
// only reading the table sees their releases.
func (p *Postgres) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	if stop, err := check.Watch(ctx, batontype.ValidateName(name)); err != nil {
		return stop, err
	}
	return p.poll.register(ctx, name, ch)
}

func (p *Postgres) states(ctx context.Context, names []string) ([]batontype.LeaseInfo, error) {
	infos, err := p.read(ctx, names)
	if err != nil {
		return nil, pgError("poll", p.table, err)
	}
	return infos, nil
}

// ExportTokens prepares the switch from this ShedLock table to baton's
// native table (lockprovider/postgres) named nativeTable in nativeSchema
// (empty: unqualified): for every name it raises the native fencing token
// and newest tick to at least this table's, and copies a live hold, so that
// the native provider grants only larger tokens and does not take a name
// before its current hold ends. Run it after the native provider's Migrate
// and before native replicas start; it is one statement and idempotent. It
// returns the number of names carried over.
func (p *Postgres) ExportTokens(ctx context.Context, nativeSchema, nativeTable string) (int64, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return 0, err
	}
	q, err := p.queries()
	if err != nil {
		return 0, err
	}
	if nativeTable == "" {
		nativeTable = defaultNativeTable
	}
	native, err := qualify(nativeSchema, nativeTable)
	if err != nil {
		return 0, err
	}
	s, err := renderSQL("export.sql", q.rep, tmplData{Table: p.table, Native: native})
	if err != nil {
		return 0, err
	}
	tag, err := p.db.Exec(ctx, s)
	if err != nil {
		return 0, pgError("export tokens from", p.table, err)
	}
	return tag.RowsAffected(), nil
}
