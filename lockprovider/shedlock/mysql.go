package shedlock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/sqldb"
	"github.com/baton-go/baton/lockprovider"
)

// SQLDB is the part of database/sql the MySQL mode uses: ExecContext,
// QueryContext and QueryRowContext; *sql.DB, *sql.Conn and *sql.Tx satisfy
// it, as it is the native provider's mysql.DB. The mode names no driver:
// the application opens the handle with the MySQL driver of its choice
// (go-sql-driver/mysql is the one tested), so users of the other modes
// never download one.
type SQLDB = sqldb.DB

// MySQLConfig configures a MySQL provider. TimeMode has no default and
// must be set; the other fields default as documented.
type MySQLConfig struct {
	// Database qualifies Table. Empty leaves it unqualified: the
	// connection's current database.
	Database string
	// Table is ShedLock's table. Defaults to DefaultTable ("shedlock").
	Table string

	// TimeMode is how the Java fleet is configured (required). DBTime is
	// ShedLock's usingDbTime(), whose MySQL statements write
	// UTC_TIMESTAMP(3).
	TimeMode TimeMode
	// JavaZone is the JVMs' default time zone, required with
	// ClientTimeZone (see NewMySQL for what is supported).
	JavaZone *time.Location

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

// MySQL is a lockprovider.Provider on ShedLock's table in MySQL 8 or
// MariaDB, sharing its locks with the Java replicas that use that table.
// It also implements lockprovider.Inspector and
// lockprovider.ReleaseNotifier. It is safe for concurrent use.
//
// Go replicas compute every time from the server's UTC_TIMESTAMP(3), as
// ShedLock's MySQL statements do with usingDbTime(). Times are exchanged
// with the client as integer microseconds, so the driver's parseTime and
// loc settings play no part. The session time zone does for TIMESTAMP
// columns (ShedLock's type), which MySQL converts through it: Check
// refuses a Go session whose time_zone is not UTC (set it in the DSN, for
// go-sql-driver/mysql time_zone=%27%2B00%3A00%27, or make UTC the server
// default), and DBTime on TIMESTAMP columns unless the server's default
// time zone, which the Java sessions use, is UTC.
//
// Acquire on MariaDB 10.5 or later is one INSERT … ON DUPLICATE KEY
// UPDATE … RETURNING, which decides and answers the row as it left it.
// MySQL has no RETURNING, and ShedLock's table is no place for stored
// procedures, so there Acquire is two statements: the same upsert, whose
// count of changed rows says whether it granted, then a SELECT of the row.
// The driver must therefore report changed rows, not matched rows: do not
// set clientFoundRows (CLIENT_FOUND_ROWS). Check reads the server's
// VERSION() to choose.
// Extend is an UPDATE and a SELECT, Release one UPDATE (and a SELECT when
// it changed nothing). Pass a DSN with interpolateParams=true so that
// each statement is one round trip.
type MySQL struct {
	db       SQLDB
	cfg      MySQLConfig
	table    string // quoted, qualified
	lockedBy string
	poll     *poller

	acquireQ   string // acquireSQL
	acquireRet string // acquireSQL … RETURNING the row (MariaDB)

	mu      sync.RWMutex
	ready   bool
	checked checked // what the last passed Check learnt
	refused error   // the last Check's refusal, until a Check passes
}

var (
	_ lockprovider.Provider        = (*MySQL)(nil)
	_ lockprovider.Inspector       = (*MySQL)(nil)
	_ lockprovider.ReleaseNotifier = (*MySQL)(nil)
)

var myIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

func myQualify(database, table string) (string, error) {
	for _, f := range []struct{ field, v string }{{"Database", database}, {"Table", table}} {
		if f.v == "" && f.field == "Database" {
			continue
		}
		if !myIdentRE.MatchString(f.v) {
			return "", &batontype.ValidationError{Pkg: "shedlock", Field: f.field, Value: fmt.Sprintf("%q", f.v),
				Reason: "must be 1 to 64 ASCII letters, digits or underscores, not starting with a digit", Err: batontype.ErrInvalid}
		}
	}
	if database == "" {
		return "`" + table + "`", nil
	}
	return "`" + database + "`.`" + table + "`", nil
}

// NewMySQL returns a provider on ShedLock's MySQL table behind db. The
// supported time configurations are DBTime and ClientTimeUTC on TIMESTAMP
// or DATETIME columns, and ClientTimeZone on TIMESTAMP columns (MySQL
// Connector/J 8 sends instants, which the server stores as such) or, with
// JavaZone UTC, on DATETIME columns; ClientTimeZone on DATETIME columns in
// another zone is refused with ErrTimeMode (Check, which sees the column
// type). NewMySQL does not touch the database: call Migrate or Check
// before the first Acquire. A nil config is the zero MySQLConfig, which
// is refused: TimeMode is required.
func NewMySQL(db SQLDB, config *MySQLConfig) (*MySQL, error) {
	var cfg MySQLConfig
	if config != nil {
		cfg = *config
	}
	if db == nil || isNilSQLDB(db) {
		return nil, &batontype.ValidationError{Pkg: "shedlock", Field: "db", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	table, err := myQualify(cfg.Database, cfg.Table)
	if err != nil {
		return nil, err
	}
	if _, err := resolveRepresentation(cfg.TimeMode, cfg.JavaZone, Timestamp); err != nil {
		return nil, err
	}
	if cfg.PollInterval, err = pollInterval(cfg.PollInterval); err != nil {
		return nil, err
	}
	cfg.Logger = defaults.Logger(cfg.Logger)
	p := &MySQL{db: db, cfg: cfg, table: table}
	p.acquireQ = p.acquireSQL()
	p.acquireRet = p.acquireQ + "\nRETURNING " + myCols
	if p.lockedBy, err = lockedByOf(cfg.LockedBy); err != nil {
		return nil, err
	}
	p.poll = newPoller(cfg.PollInterval, p.states, cfg.Logger)
	return p, nil
}

func isNilSQLDB(db SQLDB) bool {
	switch d := db.(type) {
	case *sql.DB:
		return d == nil
	case *sql.Conn:
		return d == nil
	case *sql.Tx:
		return d == nil
	}
	return false
}

// SchemaSQL returns the DDL that Migrate applies to a missing table:
// ShedLock's MySQL table, with a name column wide enough for every baton
// name and compared byte by byte, and the columns baton keeps beside
// ShedLock's. Explicit defaults keep MariaDB from giving the first
// TIMESTAMP column ON UPDATE CURRENT_TIMESTAMP.
func (p *MySQL) SchemaSQL() string {
	return "CREATE TABLE IF NOT EXISTS " + p.table + ` (
    name           VARCHAR(255) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    lock_until     TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    locked_at      TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    locked_by      VARCHAR(255) NOT NULL,
` + strings.Join(myExtraDDL, ",\n") + "\n) DEFAULT CHARSET=utf8mb4"
}

// The columns ShedLock ignores (its statements name their columns), all
// nullable so its INSERTs keep working: see the package documentation.
var (
	myExtra    = []string{"owner", "at_least_until", "fence", "last_tick"}
	myExtraDDL = []string{
		"    owner          VARBINARY(64) NULL",
		"    at_least_until DATETIME(6) NULL",
		"    fence          BIGINT NULL",
		"    last_tick      DATETIME(6) NULL",
	}
)

// Migrate creates ShedLock's table if it is missing, adds the columns this
// provider needs and ShedLock ignores (owner, at_least_until, fence,
// last_tick) in one ALTER TABLE, and then runs Check. It is idempotent;
// when concurrent Migrates race, the ALTER of the loser fails and its
// Check, which then finds the columns, decides. MySQL commits DDL at once:
// do not call it with a *sql.Tx.
func (p *MySQL) Migrate(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	if _, err := p.db.ExecContext(ctx, p.SchemaSQL()); err != nil {
		return fmt.Errorf("shedlock: migrate: %w", err)
	}
	cols, err := p.columns(ctx)
	if err != nil {
		return err
	}
	var add []string
	for i, c := range myExtra {
		if _, ok := cols[c]; !ok {
			add = append(add, "ADD COLUMN "+strings.TrimSpace(myExtraDDL[i]))
		}
	}
	if len(add) > 0 {
		if _, err := p.db.ExecContext(ctx, "ALTER TABLE "+p.table+" "+strings.Join(add, ", ")); err != nil {
			if cerr := p.Check(ctx); cerr != nil {
				return fmt.Errorf("shedlock: migrate: %w", err)
			}
			return nil
		}
	}
	return p.Check(ctx)
}

type myColumn struct {
	typ, extra string
	length     sql.NullInt64
}

func (p *MySQL) columns(ctx context.Context) (map[string]myColumn, error) {
	db, table := "DATABASE()", strings.Trim(p.cfg.Table, "`")
	args := []any{table}
	if p.cfg.Database != "" {
		db = "?"
		args = []any{p.cfg.Database, table}
	}
	rows, err := p.db.QueryContext(ctx, `SELECT LOWER(COLUMN_NAME), LOWER(DATA_TYPE), LOWER(EXTRA), CHARACTER_MAXIMUM_LENGTH
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = `+db+` AND TABLE_NAME = ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("shedlock: check %s: %w", p.table, err)
	}
	defer rows.Close()
	cols := map[string]myColumn{}
	for rows.Next() {
		var n string
		var c myColumn
		if err := rows.Scan(&n, &c.typ, &c.extra, &c.length); err != nil {
			return nil, fmt.Errorf("shedlock: check %s: %w", p.table, err)
		}
		cols[n] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shedlock: check %s: %w", p.table, err)
	}
	return cols, nil
}

// Check reads the table's columns and the time zones of the Go session and
// of the server, and refuses what a Go replica could misread: a missing
// table or column, lock_until and locked_at of a type other than
// TIMESTAMP or DATETIME (or of two types, or updated automatically by ON
// UPDATE CURRENT_TIMESTAMP), TIMESTAMP columns with a Go session whose
// time_zone is not UTC, DBTime on TIMESTAMP columns with a server whose
// default time zone (the Java sessions') is not UTC, and ClientTimeZone on
// DATETIME columns in a zone other than UTC. As with Postgres.Check, a
// refusal sticks: every operation returns an error matching ErrNotReady
// and the refusal's sentinels until a later Check passes; an error that
// says nothing about the table leaves the provider as it was.
func (p *MySQL) Check(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	c, err := p.check(ctx)
	var v verdict
	switch {
	case err == nil:
		p.mu.Lock()
		p.ready, p.checked, p.refused = true, c, nil
		p.mu.Unlock()
	case errors.As(err, &v):
		err = v.err
		p.mu.Lock()
		p.refused = &refusedError{err}
		p.mu.Unlock()
	}
	return err
}

// checked is what a passed Check learnt of the table and the server.
type checked struct {
	nameLen   int  // the name column's length in characters
	returning bool // the server has INSERT … RETURNING
}

func (p *MySQL) check(ctx context.Context) (checked, error) {
	refuse := func(err error) (checked, error) { return checked{}, verdict{err} }
	cols, err := p.columns(ctx)
	if err != nil {
		return checked{}, err
	}
	if len(cols) == 0 {
		return refuse(fmt.Errorf("shedlock: table %s does not exist (run Migrate)", p.table))
	}
	for _, c := range append([]string{"name", "locked_by"}, myExtra...) {
		if _, ok := cols[c]; !ok {
			return refuse(fmt.Errorf("shedlock: table %s has no column %s (run Migrate)", p.table, c))
		}
	}
	typ := ""
	for _, c := range []string{"lock_until", "locked_at"} {
		col, ok := cols[c]
		switch {
		case !ok:
			return refuse(fmt.Errorf("shedlock: table %s has no column %s", p.table, c))
		case col.typ != "timestamp" && col.typ != "datetime":
			return refuse(fmt.Errorf("shedlock: column %s of %s has type %q, want timestamp or datetime", c, p.table, col.typ))
		case typ != "" && col.typ != typ:
			return refuse(fmt.Errorf("shedlock: lock_until and locked_at of %s have different types", p.table))
		case strings.Contains(col.extra, "on update"):
			// The server would rewrite it on every UPDATE that does not
			// set it, Java's included.
			return refuse(fmt.Errorf("shedlock: column %s of %s is updated automatically (%s); drop ON UPDATE", c, p.table, col.extra))
		}
		typ = col.typ
	}
	var session, global, system, version string
	var offset int64
	if err := p.db.QueryRowContext(ctx, `SELECT @@session.time_zone, @@global.time_zone, @@system_time_zone,
    TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()), VERSION()`).Scan(&session, &global, &system, &offset, &version); err != nil {
		return checked{}, fmt.Errorf("shedlock: check time zone: %w", err)
	}
	if typ == "timestamp" && (!utcZone(session, system) || offset != 0) {
		return refuse(timeError("time_zone", session,
			"the Go session's time_zone must be UTC on TIMESTAMP columns, which MySQL converts through it (set time_zone='+00:00' in the DSN)"))
	}
	switch p.cfg.TimeMode {
	case DBTime:
		if typ == "timestamp" && !utcZone(global, system) {
			return refuse(timeError("time_zone", global,
				"DBTime on TIMESTAMP columns needs the server's default time_zone UTC: the Java sessions convert ShedLock's UTC_TIMESTAMP(3) through it"))
		}
	case ClientTimeZone:
		if typ == "datetime" && !isUTC(p.cfg.JavaZone) {
			return refuse(timeError("JavaZone", p.cfg.JavaZone.String(),
				"ClientTimeZone on DATETIME columns is supported only when the JVMs run in UTC (they store wall-clock times of their zone)"))
		}
	}
	c := checked{returning: hasReturning(version)}
	if l := cols["name"].length; l.Valid {
		c.nameLen = int(l.Int64)
	}
	return c, nil
}

// hasReturning reports whether a server's VERSION() is MariaDB 10.5 or
// later, the first with INSERT … RETURNING; MySQL's is a bare number.
func hasReturning(version string) bool {
	var major, minor int
	if !strings.Contains(version, "MariaDB") {
		return false
	}
	// Some proxies prefix MariaDB's version with the 5.5.5- its protocol
	// handshake carries for old clients.
	if _, err := fmt.Sscanf(strings.TrimPrefix(version, "5.5.5-"), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 10 || major == 10 && minor >= 5
}

// utcZone reports whether a MySQL time_zone value is UTC; SYSTEM stands
// for the server's system zone.
func utcZone(z, system string) bool {
	if strings.EqualFold(z, "SYSTEM") {
		z = system
	}
	switch strings.ToUpper(z) {
	case "+00:00", "-00:00", "UTC", "ETC/UTC", "GMT", "ETC/GMT", "Z", "UCT", "ZULU", "UNIVERSAL":
		return true
	}
	return false
}

func (p *MySQL) readyLen() (int, error) {
	c, err := p.readyState()
	return c.nameLen, err
}

func (p *MySQL) readyState() (checked, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch {
	case p.refused != nil:
		return checked{}, p.refused
	case !p.ready:
		return checked{}, ErrNotReady
	}
	return p.checked, nil
}

// myNameCheck refuses a name the name column cannot hold: in a
// non-strict sql_mode MySQL would truncate it silently, and two names
// would share a row. It answers what Check learnt.
func (p *MySQL) myNameCheck(name string) (checked, error) {
	c, err := p.readyState()
	if err != nil {
		return c, err
	}
	if n := c.nameLen; n > 0 && utf8.RuneCountInString(name) > n {
		return c, &batontype.ValidationError{Pkg: "shedlock", Field: "Name", Value: fmt.Sprintf("%q", name),
			Reason: fmt.Sprintf("longer than the %d characters of %s's name column", n, p.table), Err: batontype.ErrInvalid}
	}
	return c, nil
}

// SQL fragments. now is ShedLock's own server time; us turns a stored time
// into microseconds since the epoch (in the UTC session Check requires).
const (
	myNow   = "UTC_TIMESTAMP(3)"
	myEpoch = "'1970-01-01 00:00:00'"
)

// myRowNow is now when the row is locked: Extend and Release check
// liveness with it, so that one that waited behind another statement's
// release finds the lease ended (see sqldb.RowNow).
var myRowNow = sqldb.RowNow(3)

// msCeil is d in microseconds, rounded up to a whole millisecond: the
// table's TIMESTAMP(3) columns would round a finer time, possibly down,
// ending a lease or a minimum hold early.
func msCeil(d time.Duration) int64 {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond).Microseconds()
}

func us(col string) string { return "TIMESTAMPDIFF(MICROSECOND, " + myEpoch + ", " + col + ")" }

func fromUS(arg string) string { return "TIMESTAMPADD(MICROSECOND, " + arg + ", " + myEpoch + ")" }

// mine is the holder check of acquire.sql: owner AND the owner suffix of
// locked_by, which a Java takeover rewrites.
const myMine = "owner <=> ? AND RIGHT(locked_by, CHAR_LENGTH(?) + 1) = CONCAT('#', ?)"

// acquireSQL inserts the row, or takes it over when C holds: its
// lock_until passed and, with a tick, the tick is newer than the last Go
// tick and than the last grant of anyone. ON DUPLICATE KEY UPDATE assigns
// left to right, each assignment seeing the ones before: C reads only
// lock_until, locked_at and last_tick, so every column but those is
// assigned first under C itself, last_tick under C (read before it is
// assigned), and locked_at and lock_until last, under "owner, locked_by
// and at_least_until are this call's", which only a grant by this
// statement makes true (a grant to the same owner's earlier call would
// need an at_least_until equal to the microsecond).
// Args: see acquireArgs.
func (p *MySQL) acquireSQL() string {
	c := "(lock_until <= @@n AND (@@t IS NULL OR ((last_tick IS NULL OR last_tick < @@t) AND locked_at < @@t)))"
	now := "UTC_TIMESTAMP(3)"
	tick := fromUS("?")
	c = strings.NewReplacer("@@n", now, "@@t", tick).Replace(c)
	until := "TIMESTAMPADD(MICROSECOND, ?, " + now + ")"
	atLeast := "TIMESTAMPADD(MICROSECOND, ?, " + now + ")"
	fence := us(now)
	return "INSERT INTO " + p.table + ` (name, lock_until, locked_at, locked_by, owner, at_least_until, fence, last_tick)
VALUES (?, ` + until + `, ` + now + `, ?, ?, ` + atLeast + `, ` + fence + `, ` + tick + `)
ON DUPLICATE KEY UPDATE
    owner          = IF(` + c + `, ?, owner),
    locked_by      = IF(` + c + `, ?, locked_by),
    fence          = IF(` + c + `, GREATEST(COALESCE(fence, 0) + 1, ` + fence + `), fence),
    at_least_until = IF(` + c + `, ` + atLeast + `, at_least_until),
    last_tick      = IF(` + c + `, COALESCE(` + tick + `, last_tick), last_tick),
    locked_at      = IF(owner <=> ? AND locked_by <=> ? AND at_least_until <=> ` + atLeast + `, ` + now + `, locked_at),
    lock_until     = IF(owner <=> ? AND locked_by <=> ? AND at_least_until <=> ` + atLeast + `, ` + until + `, lock_until)`
}

func acquireArgs(name, owner, holder string, atMost, atLeast int64, tick any) []any {
	args := []any{name, atMost, holder, owner, atLeast, tick}
	args = append(args, tick, tick, tick, owner) // owner
	args = append(args, tick, tick, tick, holder)
	args = append(args, tick, tick, tick)               // fence
	args = append(args, tick, tick, tick, atLeast)      // at_least_until
	args = append(args, tick, tick, tick, tick)         // last_tick
	args = append(args, owner, holder, atLeast)         // locked_at
	args = append(args, owner, holder, atLeast, atMost) // lock_until
	return args
}

// myCols is a row's state as myRow scans it: selected by readSQL and
// returned by the acquire upsert on MariaDB.
var myCols = `name, lock_until > ` + myNow + `, locked_by, owner, ` + us("locked_at") + `, ` + us("lock_until") + `,
    ` + us("at_least_until") + `, COALESCE(fence, 0), ` + us("last_tick")

// readSQL is the state of one name, read back after a write, and of the
// names of Inspect, List and the poller.
func (p *MySQL) readSQL(where string) string {
	return `SELECT ` + myCols + `
FROM ` + p.table + where + ` ORDER BY name`
}

type myRow struct {
	name, lockedBy               string
	held                         bool
	owner                        sql.NullString
	at, until, atLeast, lastTick sql.NullInt64
	fence                        int64
}

// staleFor reports whether the row refuses a claim for tick (µs) by the
// tick condition: a tick recorded at or after it, or a grant at or after
// it.
func (r myRow) staleFor(tick int64) bool {
	return r.lastTick.Valid && r.lastTick.Int64 >= tick || r.at.Valid && r.at.Int64 >= tick
}

func (r myRow) mine(owner string) bool {
	return r.owner.Valid && r.owner.String == owner && strings.HasSuffix(r.lockedBy, "#"+owner)
}

func (r myRow) lease(name, owner string) batontype.Lease {
	return batontype.Lease{Name: name, Owner: owner, Token: r.fence,
		GrantedAt: usTime(r.at), Until: usTime(r.until), AtLeastUntil: usTime(r.atLeast)}
}

func usTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

func (p *MySQL) rows(ctx context.Context, names []string) ([]myRow, error) {
	where, args := "", []any{}
	if names != nil {
		where = " WHERE name IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + ")"
		for _, n := range names {
			args = append(args, n)
		}
	}
	rows, err := p.db.QueryContext(ctx, p.readSQL(where), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []myRow
	for rows.Next() {
		var r myRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// dest is where Scan puts the columns of myCols.
func (r *myRow) dest() []any {
	return []any{&r.name, &r.held, &r.lockedBy, &r.owner, &r.at, &r.until, &r.atLeast, &r.fence, &r.lastTick}
}

// row reads name's row back; ok is false when there is none.
func (p *MySQL) row(ctx context.Context, name string) (myRow, bool, error) {
	rs, err := p.rows(ctx, []string{name})
	if err != nil || len(rs) == 0 {
		return myRow{}, false, err
	}
	return rs[0], true, nil
}

// Acquire implements lockprovider.Provider: one INSERT … ON DUPLICATE KEY
// UPDATE that decides. On MariaDB it returns the row as it left it; on
// MySQL one SELECT of the row follows. That row, after a grant, is the
// grant (no one else may write a live lease) and otherwise tells why there
// was none.
func (p *MySQL) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	c, err := p.myNameCheck(a.Name)
	if err != nil {
		return batontype.Lease{}, err
	}
	var tick any
	if !a.Tick.IsZero() {
		tick = a.Tick.UnixMicro()
	}
	holder := holderText(infoOf(a, p.lockedBy), a.Owner)
	args := acquireArgs(a.Name, a.Owner, holder, msCeil(a.AtMostFor), msCeil(a.AtLeastFor), tick)
	var r myRow
	granted, existed := false, true
	if c.returning {
		// The row as the statement left it, read at the statement's
		// clock: a grant by it is live and the owner's.
		err = p.db.QueryRowContext(ctx, p.acquireRet, args...).Scan(r.dest()...)
		if err != nil {
			return batontype.Lease{}, sqlError("acquire", a.Name, err)
		}
		granted = r.held && r.mine(a.Owner)
	} else {
		res, err := p.db.ExecContext(ctx, p.acquireQ, args...)
		if err != nil {
			return batontype.Lease{}, sqlError("acquire", a.Name, err)
		}
		// 1 (inserted) or 2 (updated): this statement granted the name. A
		// grant of a very short lease may have ended before the read-back.
		n, err := res.RowsAffected()
		if err != nil {
			return batontype.Lease{}, sqlError("acquire", a.Name, err)
		}
		if r, existed, err = p.row(ctx, a.Name); err != nil {
			return batontype.Lease{}, sqlError("acquire", a.Name, err)
		}
		granted = existed && (n > 0 || r.held) && r.mine(a.Owner)
		if !granted && existed && !r.held && !(tick != nil && r.staleFor(a.Tick.UnixMicro())) {
			// Not granted, though the row read back is free and its
			// tick would have passed: the lease was still in force when
			// the upsert ran and ended before the read-back.
			r.held = true
		}
	}
	seen := acquired{granted: granted, existed: existed, held: r.held, ticked: tick != nil}
	if err := seen.refusal(); err != nil {
		return batontype.Lease{}, err
	}
	l := r.lease(a.Name, a.Owner)
	if tick != nil && r.lastTick.Valid {
		l.Tick = usTime(r.lastTick)
	}
	return l, nil
}

// Extend implements lockprovider.Provider: one UPDATE of a live lease held
// by the owner, then the row read back (an UPDATE that writes the same
// times within a millisecond changes no row, so the count alone cannot
// tell). When the UPDATE changed the row, the extension took effect: the
// lease is returned even if it has ended by the read-back (a short lease
// behind a slow reply), which the Locker's window, counted from the send,
// has already left; reporting ErrNotHeld would deny an extension that
// happened.
func (p *MySQL) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, e.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	if _, err := p.myNameCheck(e.Name); err != nil {
		return batontype.Lease{}, err
	}
	res, err := p.db.ExecContext(ctx, "UPDATE "+p.table+` SET
    lock_until     = TIMESTAMPADD(MICROSECOND, ?, `+myNow+`),
    at_least_until = TIMESTAMPADD(MICROSECOND, ?, `+myNow+`)
WHERE name = ? AND `+myMine+` AND lock_until > `+myRowNow,
		msCeil(e.AtMostFor), msCeil(e.AtLeastFor), e.Name, e.Owner, e.Owner, e.Owner)
	if err != nil {
		return batontype.Lease{}, sqlError("extend", e.Name, err)
	}
	changed, err := res.RowsAffected()
	if err != nil {
		return batontype.Lease{}, sqlError("extend", e.Name, err)
	}
	r, ok, err := p.row(ctx, e.Name)
	if err != nil {
		return batontype.Lease{}, sqlError("extend", e.Name, err)
	}
	if changed > 0 && (!ok || !r.mine(e.Owner)) {
		// The extension took effect, and the lease it set ended and went
		// to another owner before the read-back: not ErrNotHeld, which
		// would say it never took effect, and no lease to return.
		return batontype.Lease{}, fmt.Errorf("shedlock: extend %q: %w", e.Name, errExtendedThenLost)
	}
	if !ok || !r.mine(e.Owner) || !r.held && changed == 0 {
		return batontype.Lease{}, batontype.ErrNotHeld
	}
	return r.lease(e.Name, e.Owner), nil
}

// errExtendedThenLost is an Extend's outcome when the extension took
// effect but its lease had ended and the name been granted again by the
// time it was read back.
var errExtendedThenLost = errors.New("extended, but the lease ended and the name was granted again before it could be read back")

// Release implements lockprovider.Provider as ShedLock unlocks: lock_until
// becomes the later of now and the minimum-hold bound, in one UPDATE of a
// live lease held by the owner. When it changed no row, the row is read
// to tell a lease already at its bound (released) from one not held.
func (p *MySQL) Release(ctx context.Context, r lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, r.Validate()); err != nil {
		return err
	}
	if _, err := p.myNameCheck(r.Name); err != nil {
		return err
	}
	res, err := p.db.ExecContext(ctx, "UPDATE "+p.table+` SET
    lock_until = GREATEST(`+myNow+`, COALESCE(at_least_until, `+myNow+`))
WHERE name = ? AND `+myMine+` AND lock_until > `+myRowNow, r.Name, r.Owner, r.Owner, r.Owner)
	if err != nil {
		return sqlError("release", r.Name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	row, ok, err := p.row(ctx, r.Name)
	if err != nil {
		return sqlError("release", r.Name, err)
	}
	if ok && row.held && row.mine(r.Owner) && row.until == row.atLeast {
		return nil
	}
	return batontype.ErrNotHeld
}

func (r myRow) info() batontype.LeaseInfo {
	i := batontype.LeaseInfo{Name: r.name, Exists: true, Held: r.held, LockedBy: r.lockedBy, Token: r.fence,
		GrantedAt: usTime(r.at), Until: usTime(r.until), LastTick: usTime(r.lastTick)}
	if r.owner.Valid {
		i.LockedBy = strings.TrimSuffix(i.LockedBy, "#"+r.owner.String)
	}
	return i
}

// Inspect implements lockprovider.Inspector. Rows of Java grants report
// the Java host as LockedBy and Token 0 unless a Go replica held the name
// before.
func (p *MySQL) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	if _, err := p.readyLen(); err != nil {
		return batontype.LeaseInfo{}, err
	}
	r, ok, err := p.row(ctx, name)
	if err != nil {
		return batontype.LeaseInfo{}, sqlError("inspect", name, err)
	}
	if !ok {
		return batontype.LeaseInfo{Name: name}, nil
	}
	return r.info(), nil
}

// List implements lockprovider.Inspector: every row, ordered by name.
func (p *MySQL) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	if _, err := p.readyLen(); err != nil {
		return nil, err
	}
	infos, err := p.infos(ctx, nil)
	if err != nil {
		return nil, sqlError("list", p.table, err)
	}
	return infos, nil
}

// infos reads the rows of names (nil: every row), ordered by name.
func (p *MySQL) infos(ctx context.Context, names []string) ([]batontype.LeaseInfo, error) {
	rs, err := p.rows(ctx, names)
	if err != nil {
		return nil, err
	}
	infos := make([]batontype.LeaseInfo, len(rs))
	for i, r := range rs {
		infos[i] = r.info()
	}
	return infos, nil
}

// NotifyRelease implements lockprovider.ReleaseNotifier by polling (see
// MySQLConfig.PollInterval).
func (p *MySQL) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	if stop, err := check.Watch(ctx, batontype.ValidateName(name)); err != nil {
		return stop, err
	}
	return p.poll.register(ctx, name, ch)
}

func (p *MySQL) states(ctx context.Context, names []string) ([]batontype.LeaseInfo, error) {
	if _, err := p.readyLen(); err != nil {
		return nil, err
	}
	infos, err := p.infos(ctx, names)
	if err != nil {
		return nil, sqlError("poll", p.table, err)
	}
	return infos, nil
}
