package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// The DB interface is satisfied by the three pgx handles.
var (
	_ postgres.DB = (*pgxpool.Pool)(nil)
	_ postgres.DB = (*pgx.Conn)(nil)
	_ postgres.DB = (pgx.Tx)(nil)
)

// newProvider returns a migrated provider on a private schema.
// Every capability the provider has; lockprovidertest.Run exercises
// each one it finds, so losing a method must fail to compile here.
var (
	_ lockprovider.Provider        = (*postgres.Provider)(nil)
	_ lockprovider.ReleaseNotifier = (*postgres.Provider)(nil)
	_ lockprovider.Inspector       = (*postgres.Provider)(nil)
	_ lockprovider.Admin           = (*postgres.Provider)(nil)
	_ lockprovider.Ledger          = (*postgres.Provider)(nil)
	_ lockprovider.Registry        = (*postgres.Provider)(nil)
	_ lockprovider.Control         = (*postgres.Provider)(nil)
	_ lockprovider.BatchAcquirer   = (*postgres.Provider)(nil)
	_ lockprovider.BatchLedger     = (*postgres.Provider)(nil)
	_ lockprovider.BatchReleaser   = (*postgres.Provider)(nil)
	_ lockprovider.RateLimiter     = (*postgres.Provider)(nil)
	_ lockprovider.RateLister      = (*postgres.Provider)(nil)
)

func newProvider(t testing.TB, cfg *postgres.Config) (*postgres.Provider, *pgenv.PG) {
	t.Helper()
	pg := pgenv.Schema(t)
	p, err := postgres.New(pg.Pool, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, pg
}

// The conformance suite, every capability included, each subtest on a
// migrated provider in a schema of its own.
func TestConformance(t *testing.T) {
	t.Parallel()
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		return p
	}, lockprovidertest.WithHistory(history.Config{RowLocks: true}))
}

func params(name string, atMostFor time.Duration) lockprovider.AcquireParams {
	return lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: atMostFor}
}

// serverNow reads the database clock.
func serverNow(t testing.TB, db postgres.DB) time.Time {
	t.Helper()
	var now time.Time
	if err := db.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

func near(a, b time.Time, tol time.Duration) bool {
	d := a.Sub(b)
	return d <= tol && d >= -tol
}

func TestMigrateIdempotent(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil) // first run
	ctx := t.Context()
	if err := p.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	// Concurrently, from two providers (two "processes") on a fresh table.
	cfg := &postgres.Config{Table: "concurrent_locks"}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		q, err := postgres.New(pg.Pool, cfg)
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
	q, _ := postgres.New(pg.Pool, cfg)
	if _, err := q.Acquire(ctx, params("after-migrate", time.Minute)); err != nil {
		t.Fatalf("Acquire after concurrent Migrate: %v", err)
	}
}

func TestSchemaQualifiedTable(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ctx := t.Context()
	if _, err := pg.Pool.Exec(ctx, `CREATE SCHEMA "`+pg.Schema+`_x"`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pg.Pool.Exec(context.Background(), `DROP SCHEMA "`+pg.Schema+`_x" CASCADE`)
	})
	cfg := &postgres.Config{Schema: pg.Schema + "_x", Table: "My_Locks"}
	p, err := postgres.New(pg.Pool, cfg)
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
	err = pg.Pool.QueryRow(ctx, `SELECT count(*) FROM "`+pg.Schema+`_x"."My_Locks" WHERE name = 'q' AND fence = $1`, l.Token).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("row in the qualified, case-preserved table: n=%d err=%v", n, err)
	}
	// Nothing landed in the search_path schema.
	var exists bool
	_ = pg.Pool.QueryRow(ctx, `SELECT to_regclass('baton_locks') IS NOT NULL`).Scan(&exists)
	if exists {
		t.Error("default table created although a qualified one was configured")
	}
}

func TestInvalidIdentifiers(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	bad := []postgres.Config{
		{Table: "1abc"},
		{Table: `x"; DROP TABLE y; --`},
		{Table: strings.Repeat("a", 64)},
		{Schema: "has space"},
		{Schema: "a.b"},
		{RateTable: "rate-table"},
		{Table: "é"},
	}
	for _, cfg := range bad {
		_, err := postgres.New(pg.Pool, &cfg)
		var ve *batontype.ValidationError
		if !errors.Is(err, batontype.ErrInvalid) || !errors.As(err, &ve) {
			t.Errorf("New(%+v) = %v, want a *batontype.ValidationError matching ErrInvalid", cfg, err)
		}
		if _, err := postgres.SchemaSQL(&cfg); !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("SchemaSQL(%+v) = %v, want ErrInvalid", cfg, err)
		}
	}
	if _, err := postgres.New(nil, nil); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("New(nil) = %v, want ErrInvalid", err)
	}
	if _, err := postgres.New(pg.Pool, &postgres.Config{Table: strings.Repeat("b", 55)}); err != nil {
		t.Errorf("55-byte table name rejected: %v", err)
	}
	if _, err := postgres.New(pg.Pool, &postgres.Config{Table: strings.Repeat("b", 56)}); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("56-byte table name (waiters table would exceed 63 bytes): %v, want ErrInvalid", err)
	}
}

func TestSchemaSQLAppliesCleanly(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ctx := t.Context()
	ddl, err := postgres.SchemaSQL(nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if _, err := pg.Pool.Exec(ctx, ddl); err != nil {
			t.Fatalf("applying SchemaSQL: %v\n%s", err, ddl)
		}
	}
	p, err := postgres.New(pg.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.SchemaSQL() != ddl {
		t.Error("Provider.SchemaSQL differs from SchemaSQL(nil)")
	}
	if _, err := p.Acquire(ctx, params("ddl", time.Minute)); err != nil {
		t.Fatalf("Acquire on a table made by SchemaSQL: %v", err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatalf("Migrate over SchemaSQL: %v", err)
	}
}

// An acquire issued inside a transaction that began longer ago than the
// lease length must not be born expired (now() would be; clock_timestamp()
// is not).
func TestAcquireInOldTransaction(t *testing.T) {
	t.Parallel()
	_, pg := newProvider(t, nil)
	ctx := t.Context()
	tx, err := pg.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil { // the transaction's now() is fixed here
		t.Fatal(err)
	}
	const ttl = 200 * time.Millisecond
	time.Sleep(ttl + 100*time.Millisecond) // the transaction's now() is older than the lease length
	p, err := postgres.New(tx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The grant is read between two readings of the server's clock, so
	// the bound holds however long a loaded machine takes in between.
	before := serverNow(t, tx)
	l, err := p.Acquire(ctx, params("old-tx", ttl))
	if err != nil {
		t.Fatalf("Acquire in tx: %v", err)
	}
	after := serverNow(t, tx)
	if l.Until.Before(before.Add(ttl)) || l.Until.After(after.Add(ttl)) {
		t.Fatalf("lease granted in an old transaction ends at %v, want between %v and %v (the server's clock around the call + %v)",
			l.Until, before.Add(ttl), after.Add(ttl), ttl)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	q, _ := postgres.New(pg.Pool, nil)
	if _, err := q.Acquire(ctx, params("old-tx", ttl)); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("second owner right after commit: %v, want ErrNotAcquired", err)
	}
}

// waitLimit bounds a wait for something that should happen at once: a
// safety net that ends a test that would otherwise hang.
const waitLimit = 10 * time.Second

// A contender does not wait for another session's transaction that holds
// the row locked.
func TestContenderDoesNotQueue(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	first := params("busy", 50*time.Millisecond)
	if _, err := p.Acquire(ctx, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the lease is expired: only the row lock is in the way
	tx, err := pg.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT * FROM baton_locks WHERE name = 'busy' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	// The row stays locked until the contender's Acquire has returned, so
	// an Acquire that queued behind the lock would return only when the
	// safety net below rolls the transaction back, and then succeed.
	returned := make(chan struct{})
	rolledBack := make(chan bool, 1) // true: by the safety net, before Acquire returned
	go func() {
		early := false
		select {
		case <-returned:
		case <-time.After(waitLimit):
			early = true
		}
		_ = tx.Rollback(context.Background())
		rolledBack <- early
	}()
	_, err = p.Acquire(ctx, params("busy", time.Minute))
	close(returned)
	if early := <-rolledBack; early || !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("Acquire of a row locked by another transaction: %v (returned only after the lock was released: %v), want ErrNotAcquired at once", err, early)
	}
	// Once the row is unlocked the name is free.
	if _, err := p.Acquire(ctx, params("busy", time.Minute)); err != nil {
		t.Fatalf("name not acquirable after the transaction ended: %v", err)
	}
}

// The session TimeZone does not affect lease times.
func TestSessionTimeZone(t *testing.T) {
	t.Parallel()
	_, pg := newProvider(t, nil)
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = "Pacific/Kiritimati" // UTC+14
	cfg.MaxConns = 2
	far, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close()
	var tz string
	if err := far.QueryRow(ctx, "SHOW TimeZone").Scan(&tz); err != nil || tz != "Pacific/Kiritimati" {
		t.Fatalf("TimeZone = %q, %v", tz, err)
	}
	p, _ := postgres.New(far, nil)
	q, _ := postgres.New(pg.Pool, nil) // UTC or the server default
	before := time.Now()
	a := params("tz", 300*time.Millisecond)
	l, err := p.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if !near(l.GrantedAt, before, 2*time.Second) {
		t.Errorf("GrantedAt %v is not near the local clock %v", l.GrantedAt, before)
	}
	if d := l.Until.Sub(l.GrantedAt); d != 300*time.Millisecond {
		t.Errorf("Until-GrantedAt = %v, want 300ms", d)
	}
	if _, err := q.Acquire(ctx, params("tz", time.Minute)); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("other session while held: %v, want ErrNotAcquired", err)
	}
	info, err := q.Inspect(ctx, "tz")
	if err != nil || !info.Until.Equal(l.Until) {
		t.Errorf("Until read from a UTC session = %v (%v), want %v", info.Until, err, l.Until)
	}
	time.Sleep(350 * time.Millisecond) // the 300 ms lease lapses (AtMostFor)
	if _, err := q.Acquire(ctx, params("tz", time.Minute)); err != nil {
		t.Errorf("other session after expiry: %v", err)
	}
}

// Serialization failures in a caller's REPEATABLE READ / SERIALIZABLE
// transaction mean "not acquired".
func TestSerializationFailure(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	// The lease exists and expires, so the name is free.
	if _, err := p.Acquire(ctx, params("ser", 20*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // the 20 ms lease lapses (AtMostFor)
	for _, iso := range []pgx.TxIsoLevel{pgx.RepeatableRead, pgx.Serializable} {
		tx, err := pg.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT count(*) FROM baton_locks"); err != nil { // take the snapshot
			t.Fatal(err)
		}
		// Another session takes the name and releases it: the row changes
		// after the transaction's snapshot.
		o := params("ser", time.Minute)
		if _, err := p.Acquire(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "ser", Owner: o.Owner}); err != nil {
			t.Fatal(err)
		}
		inTx, _ := postgres.New(tx, nil)
		_, err = inTx.Acquire(ctx, params("ser", time.Minute))
		if !errors.Is(err, batontype.ErrNotAcquired) {
			t.Errorf("%s: Acquire after a concurrent update = %v, want ErrNotAcquired", iso, err)
		}
		_ = tx.Rollback(ctx)
	}
}

// A pre-existing stale row, written by someone else, is taken over.
func TestStaleRowTakeover(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	_, err := pg.Pool.Exec(ctx, `INSERT INTO baton_locks (name, owner, locked_by, locked_at, lock_until, at_least_until, fence)
		VALUES ('stale', 'someone', 'me', now() - interval '2 days', now() - interval '1 day', now() - interval '1 day', 41)`)
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.Inspect(ctx, "stale")
	if err != nil || !info.Exists || info.Held {
		t.Fatalf("stale row reads as %+v, %v; want existing, not held", info, err)
	}
	a := params("stale", time.Minute)
	l, err := p.Acquire(ctx, a)
	if err != nil {
		t.Fatalf("Acquire over a stale row: %v", err)
	}
	if l.Token <= 41 {
		t.Errorf("Token = %d, want above the stale row's 41", l.Token)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "stale", Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}
	if info, _ := p.Inspect(ctx, "stale"); info.Held {
		t.Error("held after release")
	}
}

// An over-long name is an error, not "not acquired", and writes nothing.
func TestOverLongName(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	_, err := p.Acquire(ctx, params(strings.Repeat("n", batontype.MaxNameLen+1), time.Minute))
	if !errors.Is(err, batontype.ErrInvalidName) || errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("over-long name: %v, want ErrInvalidName", err)
	}
	var n int
	_ = pg.Pool.QueryRow(ctx, "SELECT count(*) FROM baton_locks").Scan(&n)
	if n != 0 {
		t.Errorf("%d rows written for a rejected name", n)
	}
}

type row struct {
	Owner                              string
	GrantedAt, LockUntil, AtLeastUntil time.Time
	Token                              int64
}

func readRow(t testing.TB, db postgres.DB, name string) row {
	t.Helper()
	var r row
	err := db.QueryRow(context.Background(),
		"SELECT owner, locked_at, lock_until, at_least_until, fence FROM baton_locks WHERE name = $1", name).
		Scan(&r.Owner, &r.GrantedAt, &r.LockUntil, &r.AtLeastUntil, &r.Token)
	if err != nil {
		t.Fatalf("read row %q: %v", name, err)
	}
	return r
}

// Acquiring one name never touches another row; acquiring a
// held name never modifies its row; acquiring after expiry takes it over.
func TestRowIsolation(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	for _, n := range []string{"a", "b"} {
		if _, err := p.Acquire(ctx, params(n, 30*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	held := params("held", time.Minute)
	if _, err := p.Acquire(ctx, held); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a and b expire
	bBefore := readRow(t, pg.Pool, "b")
	heldBefore := readRow(t, pg.Pool, "held")
	var xmin string
	_ = pg.Pool.QueryRow(ctx, "SELECT xmin::text FROM baton_locks WHERE name = 'held'").Scan(&xmin)

	// Takeover after expiry.
	a2 := params("a", time.Minute)
	if _, err := p.Acquire(ctx, a2); err != nil {
		t.Fatalf("Acquire after expiry: %v", err)
	}
	if r := readRow(t, pg.Pool, "a"); r.Owner != a2.Owner {
		t.Errorf("row a owner = %q, want the new owner", r.Owner)
	}
	// B is untouched.
	if r := readRow(t, pg.Pool, "b"); r != bBefore {
		t.Errorf("row b changed by acquiring a: %+v -> %+v", bBefore, r)
	}
	// A held name's row is unchanged by a contender, not even rewritten.
	for range 3 {
		if _, err := p.Acquire(ctx, params("held", time.Hour)); !errors.Is(err, batontype.ErrNotAcquired) {
			t.Fatalf("Acquire of a held name: %v", err)
		}
	}
	if r := readRow(t, pg.Pool, "held"); r != heldBefore {
		t.Errorf("held row changed by a refused acquire: %+v -> %+v", heldBefore, r)
	}
	var xmin2 string
	_ = pg.Pool.QueryRow(ctx, "SELECT xmin::text FROM baton_locks WHERE name = 'held'").Scan(&xmin2)
	if xmin != xmin2 {
		t.Errorf("held row rewritten (xmin %s -> %s)", xmin, xmin2)
	}
}

// countingTracer counts statements per operation.
type countingTracer struct{ n atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestOneStatementPerOperation(t *testing.T) {
	t.Parallel()
	_, pg := newProvider(t, nil)
	ctx := t.Context()
	tr := &countingTracer{}
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tr
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p, _ := postgres.New(pool, nil)
	count := func(what string, op func() error, wantErr error) {
		t.Helper()
		before := tr.n.Load()
		if err := op(); !errors.Is(err, wantErr) {
			t.Fatalf("%s: %v, want %v", what, err, wantErr)
		}
		if n := tr.n.Load() - before; n != 1 {
			t.Errorf("%s issued %d statements, want 1", what, n)
		}
	}
	a := params("rt", time.Minute)
	acquire := func(a lockprovider.AcquireParams) func() error {
		return func() error { _, err := p.Acquire(ctx, a); return err }
	}
	count("Acquire", acquire(a), nil)
	count("Acquire again (same owner)", acquire(a), nil)
	count("Acquire by another owner", acquire(params("rt", time.Minute)), batontype.ErrNotAcquired)
	count("Extend", func() error {
		_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: "rt", Owner: a.Owner, AtMostFor: time.Hour})
		return err
	}, nil)
	count("Release", func() error { return p.Release(ctx, lockprovider.ReleaseParams{Name: "rt", Owner: a.Owner}) }, nil)
	tick := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ta := params("rt", time.Minute)
	ta.Tick = tick
	count("Acquire with tick", acquire(ta), nil)
	count("Release", func() error { return p.Release(ctx, lockprovider.ReleaseParams{Name: "rt", Owner: ta.Owner}) }, nil)
	tb := params("rt", time.Minute)
	tb.Tick = tick
	count("Acquire with a stale tick", acquire(tb), batontype.ErrStaleTick)
	count("Release when not held", func() error { return p.Release(ctx, lockprovider.ReleaseParams{Name: "rt", Owner: tb.Owner}) }, batontype.ErrNotHeld)
	count("Extend when not held", func() error {
		_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: "rt", Owner: tb.Owner, AtMostFor: time.Hour})
		return err
	}, batontype.ErrNotHeld)
}

// The methods outside the lockprovider interfaces, which the conformance
// suites do not reach, refuse a nil context too.
func TestOwnMethodsNilContext(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t, nil)
	var nilCtx context.Context
	if err := p.Migrate(nilCtx); !errors.Is(err, batontype.ErrNilContext) {
		t.Errorf("Migrate(nil): %v; want ErrNilContext", err)
	}
	if _, err := p.SweepRates(nilCtx); !errors.Is(err, batontype.ErrNilContext) {
		t.Errorf("SweepRates(nil): %v; want ErrNilContext", err)
	}
}

// A refused Acquire leaves the row unlocked: a contender refused inside a
// caller's transaction (or by a slow statement on a busy server) must not
// make a later contender fail, with 55P03 taken for "held", once the lease
// it was refused for has ended.
func TestRefusedAcquireLeavesRowUnlocked(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	const lease = 300 * time.Millisecond
	if _, err := p.Acquire(ctx, params("refused", lease)); err != nil {
		t.Fatal(err)
	}
	tx, err := pg.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	inTx, err := postgres.New(tx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inTx.Acquire(ctx, params("refused", time.Minute)); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("contender while held: %v, want ErrNotAcquired", err)
	}
	time.Sleep(lease + 100*time.Millisecond) // the holder's lease lapses (AtMostFor)
	if _, err := p.Acquire(ctx, params("refused", time.Minute)); err != nil {
		t.Fatalf("contender after the lease ended, while the refused one's transaction is open: %v, want the grant", err)
	}
}
