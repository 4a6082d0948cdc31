package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// newProvider returns a migrated provider on a private database.
// Every capability the provider has; lockprovidertest.Run exercises
// each one it finds, so losing a method must fail to compile here.
var (
	_ lockprovider.Provider        = (*mysql.Provider)(nil)
	_ lockprovider.ReleaseNotifier = (*mysql.Provider)(nil)
	_ lockprovider.Inspector       = (*mysql.Provider)(nil)
	_ lockprovider.Admin           = (*mysql.Provider)(nil)
	_ lockprovider.Ledger          = (*mysql.Provider)(nil)
	_ lockprovider.Registry        = (*mysql.Provider)(nil)
	_ lockprovider.Control         = (*mysql.Provider)(nil)
	_ lockprovider.BatchAcquirer   = (*mysql.Provider)(nil)
	_ lockprovider.BatchLedger     = (*mysql.Provider)(nil)
	_ lockprovider.BatchReleaser   = (*mysql.Provider)(nil)
	_ lockprovider.RateLimiter     = (*mysql.Provider)(nil)
	_ lockprovider.RateLister      = (*mysql.Provider)(nil)
)

func newProvider(t testing.TB, cfg *mysql.Config) (*mysql.Provider, *mysqlenv.MY) {
	t.Helper()
	my := mysqlenv.Database(t)
	return migrated(t, my.DB, cfg), my
}

// migrated returns a migrated provider on db.
func migrated(t testing.TB, db mysql.DB, cfg *mysql.Config) *mysql.Provider {
	t.Helper()
	p, err := mysql.New(db, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p
}

// The conformance suite, every capability the provider implements, each
// subtest on a migrated provider in a database of its own.
func TestConformance(t *testing.T) {
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		return p
	}, lockprovidertest.WithHistory(history.Config{RowLocks: true}))
}

// TestConformanceProcedureAcquire runs the suite with Acquire on the
// procedure it uses on MySQL (MariaDB takes the single statement).
func TestConformanceProcedureAcquire(t *testing.T) {
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		mysql.UseProcedureAcquire(p)
		return p
	}, lockprovidertest.WithHistory(history.Config{RowLocks: true}))
}

func params(name string, atMostFor time.Duration) lockprovider.AcquireParams {
	return lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: atMostFor}
}

func TestMigrateIdempotent(t *testing.T) {
	p, my := newProvider(t, nil) // first run
	ctx := t.Context()
	if err := p.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	// Concurrently, from four providers ("processes") on fresh tables.
	cfg := &mysql.Config{Table: "concurrent_locks", RateTable: "concurrent_rates"}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		q, err := mysql.New(my.DB, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs <- q.Migrate(ctx) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Migrate: %v", err)
		}
	}
	q, _ := mysql.New(my.DB, cfg)
	if _, err := q.Acquire(ctx, params("after-migrate", time.Minute)); err != nil {
		t.Fatalf("Acquire after concurrent Migrate: %v", err)
	}
	// An unchanged schema replaces no procedure: their creation times stay.
	created := func() string {
		var s string
		if err := my.DB.QueryRowContext(ctx, "SELECT GROUP_CONCAT(CONCAT(ROUTINE_NAME, CREATED) ORDER BY ROUTINE_NAME) "+
			"FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := created()
	time.Sleep(1100 * time.Millisecond) // CREATED has whole seconds
	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if after := created(); after != before {
		t.Errorf("Migrate of an unchanged schema recreated procedures:\n%s\n%s", before, after)
	}
}

// migrateOver returns a provider whose schema the statements older
// turned back into an older version's, then migrated twice.
func migrateOver(t *testing.T, older ...string) *mysql.Provider {
	t.Helper()
	p, my := newProvider(t, nil)
	for _, q := range older {
		if _, err := my.DB.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for range 2 {
		if err := p.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate over the older schema: %v", err)
		}
	}
	return p
}

// A deployment migrated before the ledger recorded force-releases (a runs
// table without released_by and released_at, the old force_release) is
// upgraded by Migrate: the columns are added, the procedure replaced, and
// a force-release then marks its run. Migrate again changes nothing.
func TestMigrateUpgradesReleaseColumns(t *testing.T) {
	p := migrateOver(t,
		"ALTER TABLE `baton_locks_runs` DROP COLUMN released_by, DROP COLUMN released_at",
		"ALTER PROCEDURE `baton_locks_force_release` COMMENT 'baton an older text'")
	ctx := t.Context()
	l, err := p.AcquireRun(ctx, params("upgraded", time.Minute), lockprovider.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: "upgraded", Token: l.Token, By: "cli:ops@host"}); err != nil {
		t.Fatalf("ForceRelease after the upgrade: %v", err)
	}
	runs, err := p.Runs(ctx, batontype.RunQuery{Job: "upgraded"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ReleasedBy != "cli:ops@host" || runs[0].ReleasedAt.IsZero() {
		t.Errorf("runs after the upgrade: %+v, want one released by cli:ops@host", runs)
	}
}

// A lease table made before releases were counted in it (no releases
// column, the old rel) is upgraded by Migrate: the column is added, and a
// release then reaches a waiter through it. Migrate again changes nothing.
func TestMigrateUpgradesReleaseCount(t *testing.T) {
	p := migrateOver(t,
		"ALTER TABLE `baton_locks` DROP COLUMN releases",
		"ALTER PROCEDURE `baton_locks_rel` COMMENT 'baton an older text'")
	ctx := t.Context()
	a := params("upgraded", time.Minute)
	if _, err := p.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "upgraded", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "upgraded", Owner: a.Owner}); err != nil {
		t.Fatalf("Release after the upgrade: %v", err)
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second): // many poll intervals, on a loaded machine
		t.Fatal("no release notification after the upgrade")
	}
}

// A deployment migrated before pause spans were recorded (no _resumed
// table, the old ctl_pause and ctl_state) is upgraded by Migrate: a
// flag set before the upgrade, resumed after it, yields its span.
func TestMigrateUpgradesPauseSpans(t *testing.T) {
	p, my := newProvider(t, nil)
	ctx := t.Context()
	if err := p.SetPaused(ctx, "upgraded", true); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"DROP TABLE `baton_locks_resumed`",
		"ALTER PROCEDURE `baton_locks_ctl_pause` COMMENT 'baton an older text'",
		"ALTER PROCEDURE `baton_locks_ctl_state` COMMENT 'baton an older text'",
	} {
		if _, err := my.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for range 2 {
		if err := p.Migrate(ctx); err != nil {
			t.Fatalf("Migrate over the older schema: %v", err)
		}
	}
	if err := p.SetPaused(ctx, "upgraded", false); err != nil {
		t.Fatalf("resume after the upgrade: %v", err)
	}
	st, err := p.ControlState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp := st.PausesOf("upgraded"); len(sp) != 1 || sp[0].From.IsZero() || sp[0].Until.Before(sp[0].From) || len(st.Paused) != 0 {
		t.Errorf("after the upgrade: paused %q, spans %+v; want none paused and one ended span", st.Paused, sp)
	}
}

func TestDatabaseQualifiedTable(t *testing.T) {
	my := mysqlenv.Database(t)
	other := mysqlenv.Database(t)
	ctx := t.Context()
	cfg := &mysql.Config{Database: other.Database, Table: "My_Locks"}
	p, err := mysql.New(my.DB, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	l, err := p.Acquire(ctx, params("q", time.Minute))
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	var n int
	err = my.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+other.Database+"`.`My_Locks` WHERE name = 'q' AND fence = ?", l.Token).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("row in the qualified table: n=%d err=%v", n, err)
	}
	// Nothing landed in the connection's database.
	err = my.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("tables in the connection's database: %d (err %v), want none", n, err)
	}
}

func TestInvalidIdentifiers(t *testing.T) {
	my := mysqlenv.Database(t)
	bad := []mysql.Config{
		{Table: "1abc"},
		{Table: "x`; DROP TABLE y; --"},
		{Table: strings.Repeat("a", 41)},
		{Database: "has space"},
		{Database: "a.b"},
		{RateTable: "rate-table"},
		{Table: "é"},
		{PollInterval: time.Millisecond},
	}
	for _, cfg := range bad {
		_, err := mysql.New(my.DB, &cfg)
		var ve *batontype.ValidationError
		if !errors.Is(err, batontype.ErrInvalid) || !errors.As(err, &ve) {
			t.Errorf("New(%+v) = %v, want a *batontype.ValidationError matching ErrInvalid", cfg, err)
		}
	}
	if _, err := mysql.New(nil, nil); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("New(nil) = %v, want ErrInvalid", err)
	}
	var nilDB *sql.DB
	if _, err := mysql.New(nilDB, nil); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("New((*sql.DB)(nil)) = %v, want ErrInvalid", err)
	}
	if _, err := mysql.New(my.DB, &mysql.Config{Table: strings.Repeat("b", 40)}); err != nil {
		t.Errorf("40-byte table name rejected: %v", err)
	}
}

// SchemaSQL is what Migrate applies, in the form the mariadb client reads.
func TestSchemaSQLAppliesCleanly(t *testing.T) {
	client, err := exec.LookPath("mariadb")
	if err != nil {
		if client, err = exec.LookPath("mysql"); err != nil {
			t.Fatal("neither the mariadb nor the mysql client is installed (Debian: mariadb-client)")
		}
	}
	my := mysqlenv.Database(t)
	ctx := t.Context()
	ddl, err := mysql.SchemaSQL(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(cfg.Addr, ":")
	for range 2 { // idempotent
		cmd := exec.CommandContext(ctx, client, "--no-defaults", "-h", host, "-P", port, "-u", cfg.User, "--password="+cfg.Passwd, cfg.DBName)
		cmd.Stdin = strings.NewReader(ddl)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("applying SchemaSQL with %s: %v\n%s", client, err, out)
		}
	}
	p, err := mysql.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.SchemaSQL() != ddl {
		t.Error("Provider.SchemaSQL differs from SchemaSQL(nil)")
	}
	if _, err := p.Acquire(ctx, params("ddl", time.Minute)); err != nil {
		t.Fatalf("Acquire on tables made by SchemaSQL: %v", err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatalf("Migrate over SchemaSQL: %v", err)
	}
}

// questions reads the session's count of statements sent by the client
// (statements run inside procedures are not counted).
func questions(t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	var name string
	var n int64
	if err := c.QueryRowContext(context.Background(), "SHOW SESSION STATUS LIKE 'Questions'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every operation is one statement from the client (one round trip with
// interpolateParams, as mysqlenv sets).
func TestOneStatementPerOperation(t *testing.T) {
	_, my := newProvider(t, nil)
	ctx := t.Context()
	conn, err := my.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p, err := mysql.New(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := params("one-trip", time.Minute)
	a.Tick = time.Now()
	limits := []batontype.RateLimit{{Algorithm: batontype.GCRA, Rate: 10, Period: time.Second, Burst: 5},
		{Algorithm: batontype.SlidingLog, Rate: 10, Period: time.Second}}
	for _, op := range []struct {
		name string
		fn   func() error
	}{
		{"Acquire", func() error { _, err := p.Acquire(ctx, a); return err }},
		{"Extend", func() error {
			_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: time.Minute})
			return err
		}},
		{"Release", func() error { return p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}) }},
		{"AcquireBatch", func() error {
			_, err := p.AcquireBatch(ctx, []lockprovider.AcquireParams{params("b1", time.Minute), params("b2", time.Minute)})
			return err
		}},
		{"RateLimit", func() error {
			_, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "k", N: 1, Limits: limits})
			return err
		}},
		{"ForceRelease", func() error {
			_, err := p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: "b1", By: "test"})
			return err
		}},
	} {
		before := questions(t, conn)
		if err := op.fn(); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		if n := questions(t, conn) - before - 1; n != 1 { // less the SHOW itself
			t.Errorf("%s sent %d statements, want 1", op.name, n)
		}
	}
}

// Times come from the server's UTC clock whatever the session's time zone
// and the process's.
func TestSessionTimeZone(t *testing.T) {
	my := mysqlenv.Database(t)
	db := mysqlenv.Open(t, my.DSN+"?time_zone=%27%2B09%3A00%27&loc=Asia%2FTokyo")
	var tz string
	if err := db.QueryRowContext(t.Context(), "SELECT @@session.time_zone").Scan(&tz); err != nil || tz != "+09:00" {
		t.Fatalf("session time zone %q (%v), want +09:00", tz, err)
	}
	p, err := mysql.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	l, err := p.Acquire(t.Context(), params("tz", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// The server runs on this machine: its clock is ours.
	if d := l.GrantedAt.Sub(before); d < -time.Second || d > 5*time.Second {
		t.Errorf("GrantedAt %v is %v from the local clock at the call", l.GrantedAt, d)
	}
	var stored string
	if err := db.QueryRowContext(t.Context(), "SELECT DATE_FORMAT(locked_at, '%Y-%m-%d %H:%i:%s.%f') FROM baton_locks WHERE name = 'tz'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := l.GrantedAt.UTC().Format("2006-01-02 15:04:05.000000"); stored != want {
		t.Errorf("stored locked_at %s, want %s (UTC)", stored, want)
	}
}

// A contender does not wait for another session's transaction that holds
// the row locked, and an acquire inside a caller's transaction is not born
// expired however old the transaction.
func TestCallerTransaction(t *testing.T) {
	p, my := newProvider(t, nil)
	ctx := t.Context()
	first := params("busy", 50*time.Millisecond)
	if _, err := p.Acquire(ctx, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the lease is expired: only the row lock is in the way
	tx, err := my.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	time.Sleep(ttl + 100*time.Millisecond) // older than the lease length
	inTx, err := mysql.New(tx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The end is compared with the time before the call (the server is on
	// this machine, so its clock is this one): a stall after the grant
	// on a loaded machine cannot fail the check, a lease computed from
	// the transaction's start (over ttl ago) does.
	called := time.Now()
	l, err := inTx.Acquire(ctx, params("busy", ttl))
	if err != nil {
		t.Fatalf("Acquire in tx: %v", err)
	}
	if l.Until.Before(called.Add(ttl / 2)) {
		t.Fatalf("lease granted in an old transaction ends %v after the call began, want about %v", l.Until.Sub(called), ttl)
	}
	// The transaction holds the row: a contender is refused at once
	// (MariaDB's lock wait is cut to nothing; MySQL's minimum is 1s).
	start := time.Now()
	_, err = p.Acquire(ctx, params("busy", time.Minute))
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Acquire waited %v for another transaction's row lock", took)
	}
	if !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("Acquire of a row locked by another transaction: %v, want ErrNotAcquired", err)
	}
	// The session's lock wait is restored after the call.
	var wait int
	if err := tx.QueryRowContext(ctx, "SELECT @@SESSION.innodb_lock_wait_timeout").Scan(&wait); err != nil || wait == 0 {
		t.Errorf("innodb_lock_wait_timeout after Acquire = %d (%v), want the default restored", wait, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The rolled-back grant never happened; its token is not issued again.
	next, err := p.Acquire(ctx, params("busy", time.Minute))
	if err != nil {
		t.Fatalf("after the rollback the name should be free: %v", err)
	}
	if next.Token <= l.Token {
		t.Errorf("token %d after a rolled-back grant with token %d", next.Token, l.Token)
	}
}

// Rate-limit rows expire and SweepRates deletes them.
func TestSweepRates(t *testing.T) {
	p, my := newProvider(t, nil)
	ctx := t.Context()
	lim := []batontype.RateLimit{{Algorithm: batontype.FixedWindow, Rate: 5, Period: 50 * time.Millisecond}}
	for i := range 20 {
		if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "sweep-" + strconv.Itoa(i), N: 1, Limits: lim}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond) // the 50 ms windows end: their rows are expired
	n, err := p.SweepRates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left int
	if err := my.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM baton_rates").Scan(&left); err != nil {
		t.Fatal(err)
	}
	if n == 0 || left != 0 {
		t.Errorf("SweepRates deleted %d rows, %d left; want all 20 (and any the decisions swept) gone", n, left)
	}
}

// The sweep never deletes a row of a key whose decision is in progress
// (its named lock held): such a decision may have read its clock before
// the sweep's and would read its state after the delete, deciding on an
// empty state too early (the rate-limit conformance bound check saw a GCRA
// key admit 13 requests in 150 ms where its bound allows 12).
func TestSweepSkipsKeyInDecision(t *testing.T) {
	p, my := newProvider(t, nil)
	ctx := t.Context()
	busy, idle := "busy", "idle"
	lim := []batontype.RateLimit{{Algorithm: batontype.GCRA, Rate: 1, Period: time.Millisecond}}
	keys := func() string {
		t.Helper()
		var ks string
		if err := my.DB.QueryRowContext(ctx, "SELECT COALESCE(GROUP_CONCAT(rkey ORDER BY rkey), '') FROM baton_rates").Scan(&ks); err != nil {
			t.Fatal(err)
		}
		return ks
	}
	// One decision in 64 sweeps as it goes, and the second one may find
	// the first key's row expired already: take the decisions again until
	// both rows are there. Nothing else decides afterwards, so nothing
	// else sweeps.
	for try := 0; keys() != busy+","+idle; try++ {
		if try == 20 {
			t.Fatalf("rows after %d tries: %q; want both keys'", try, keys())
		}
		for _, k := range []string{busy, idle} {
			if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: k, N: 1, Limits: lim}); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(20 * time.Millisecond) // both rows expire after 1 ms
	conn, err := my.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The name the decision procedure locks (migrations/002_ratelimit.sql);
	// the connection's database is the procedure's.
	const name = "CONCAT('baton:', SHA1(CONCAT(DATABASE(), 0x00, '`baton_rates`', 0x00, ?)))"
	var got int
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK("+name+", 0)", busy).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK of the key: %d, %v", got, err)
	}
	if n, err := p.SweepRates(ctx); err != nil || n != 1 || keys() != busy {
		t.Fatalf("SweepRates with the key busy: %d deleted (%v), rows left for %q; want 1, the busy key's row kept", n, err, keys())
	}
	if _, err := conn.ExecContext(ctx, "DO RELEASE_LOCK("+name+")", busy); err != nil {
		t.Fatal(err)
	}
	if n, err := p.SweepRates(ctx); err != nil || n != 1 || keys() != "" {
		t.Fatalf("SweepRates once the key is free: %d deleted (%v), rows left for %q; want 1, none left", n, err, keys())
	}
	// The sweep released every lock it took.
	for _, k := range []string{busy, idle} {
		var free int
		if err := my.DB.QueryRowContext(ctx, "SELECT IS_FREE_LOCK("+name+")", k).Scan(&free); err != nil || free != 1 {
			t.Errorf("the named lock of %q after the sweeps: free %d (%v); want free", k, free, err)
		}
	}
}

// A decision held up between reading its clock and reading its rows (here
// by another transaction holding its first limit's row) keeps its key's
// state: a sweep meanwhile may not delete the second limit's row, though
// it has expired by the sweep's clock. Deleted, the decision would see no
// state at a time before the row's expiry and admit a request that GCRA
// refuses.
func TestSweepDuringDecision(t *testing.T) {
	p, my := newProvider(t, nil)
	ctx := t.Context()
	const gap = 2 * time.Second // GCRA: one request per gap, burst 1
	lims := []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 1000, Period: time.Hour},
		{Algorithm: batontype.GCRA, Rate: 1, Period: gap},
	}
	req := lockprovider.RateRequest{Key: "k", N: 1, Limits: lims}
	first, err := p.RateLimit(ctx, req)
	if err != nil || !first.Allowed {
		t.Fatalf("first request: %+v, %v", first, err)
	}
	// Hold the fixed window's row (its a is the window number, the GCRA
	// row's a a time in µs): the next decision reads its clock, then
	// waits for this row.
	tx, err := my.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var window int64
	if err := tx.QueryRowContext(ctx, "SELECT a FROM baton_rates WHERE rkey = 'k' AND a < 1000000000000 FOR UPDATE").Scan(&window); err != nil {
		t.Fatalf("locking the fixed window's row: %v", err)
	}
	type answer struct {
		res lockprovider.RateResult
		err error
	}
	second := make(chan answer, 1)
	go func() {
		res, err := p.RateLimit(ctx, req)
		second <- answer{res, err}
	}()
	// The bounds below only stop a broken test from hanging: the steps
	// take milliseconds.
	deadline := time.Now().Add(time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatal("the second decision never waited for the held row")
		}
		// The decision's session is at its row read (it read its clock
		// before): InnoDB lists the wait of an autocommit read nowhere
		// else.
		var waiting int
		if err := my.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT t.a, t.b%FOR UPDATE'").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	// Past the GCRA row's expiry, by the server's clock, sweep.
	for {
		if time.Now().After(deadline.Add(gap)) {
			t.Fatal("the server's clock did not pass the GCRA row's expiry")
		}
		var now int64
		if err := my.DB.QueryRowContext(ctx, "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6))").Scan(&now); err != nil {
			t.Fatal(err)
		}
		if now > first.Now.Add(gap).UnixMicro()+1000 {
			break
		}
		time.Sleep(50 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	if _, err := p.SweepRates(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-second
	if a.err != nil {
		t.Fatal(a.err)
	}
	// GCRA with burst 1 admits the second request no sooner than one gap
	// after the first, in the server time each decision reports.
	if since := a.res.Now.Sub(first.Now); a.res.Allowed && since < gap {
		t.Fatalf("second request admitted %v after the first; GCRA allows one per %v (the sweep deleted the state of a decision in progress)", since, gap)
	}
}

// Without interpolateParams the driver prepares each statement (two round
// trips); every operation still works, the CALLs with result sets
// included.
func TestPreparedStatements(t *testing.T) {
	my := mysqlenv.Database(t)
	cfg, err := gomysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.InterpolateParams = false
	c, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	p := migrated(t, db, nil)
	ctx := t.Context()
	a := params("prepared", time.Minute)
	a.Tick = time.Now()
	l, err := p.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}
	b := params("prepared", time.Minute)
	res, err := p.AcquireBatch(ctx, []lockprovider.AcquireParams{b})
	if err != nil || res[0].Err != nil || res[0].Lease.Token <= l.Token {
		t.Fatalf("AcquireBatch: %v %+v", err, res)
	}
	r, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "k", N: 1,
		Limits: []batontype.RateLimit{{Algorithm: batontype.TokenBucket, Rate: 5, Period: time.Second, Burst: 5}}})
	if err != nil || !r.Allowed || r.Limits[0].Remaining != 4 {
		t.Fatalf("RateLimit: %+v, %v", r, err)
	}
}

// On a *sql.DB the lock cycle's statements are prepared once per
// connection and then only executed; the rest stays text.
func TestHotStatementsPrepared(t *testing.T) {
	my := mysqlenv.Database(t)
	db := mysqlenv.Open(t, my.DSN)
	db.SetMaxOpenConns(1) // one connection, so its session counters see every call
	p := migrated(t, db, nil)
	ctx := t.Context()
	counters := func() (prepares, executes int64) {
		rows, err := db.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_execute')")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var v int64
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			if k == "Com_stmt_prepare" {
				prepares = v
			} else {
				executes = v
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return prepares, executes
	}
	prep0, exec0 := counters()
	for i := range 5 {
		a := params("hot", time.Minute)
		l, err := p.Acquire(ctx, a)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: l.Name, Owner: l.Owner}); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
	}
	if _, err := p.Inspect(ctx, "hot"); err != nil {
		t.Fatal(err)
	}
	prep1, exec1 := counters()
	if prep1-prep0 != 2 || exec1-exec0 != 10 {
		t.Errorf("5 lock cycles and an Inspect: %d prepares, %d executions; want 2 and 10", prep1-prep0, exec1-exec0)
	}
}

// A batch item whose row another session's transaction holds is refused
// alone (error 1205 inside the procedure), the first item included, and
// the other items are granted.
func TestBatchRowLocked(t *testing.T) {
	p, my := newProvider(t, nil)
	ctx := t.Context()
	for _, n := range []string{"a-busy", "b-free"} { // rows exist, leases ended
		a := params(n, time.Minute)
		if _, err := p.Acquire(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: n, Owner: a.Owner}); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := my.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT * FROM baton_locks WHERE name = 'a-busy' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	res, err := p.AcquireBatch(ctx, []lockprovider.AcquireParams{params("a-busy", time.Minute), params("b-free", time.Minute), params("c-new", time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, batontype.ErrNotAcquired) {
		t.Errorf("locked row: %v, want ErrNotAcquired", res[0].Err)
	}
	for i := 1; i < 3; i++ {
		if res[i].Err != nil || res[i].Lease.Token <= 0 {
			t.Errorf("item %d: %+v, want a grant", i, res[i])
		}
	}
}
