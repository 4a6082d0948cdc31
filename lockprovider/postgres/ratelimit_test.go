package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

var _ lockprovider.RateLimiter = (*postgres.Provider)(nil)

// rateProvider returns a migrated provider on a private schema, on a pool
// whose statements are counted.
func rateProvider(t testing.TB, cfg postgres.Config) (*postgres.Provider, *pgenv.PG, *rateTracer) {
	t.Helper()
	pg := pgenv.Schema(t)
	tr := &rateTracer{}
	pcfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	cfg.Schema = pg.Schema
	p, err := postgres.New(pool, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, pg, tr
}

type rateTracer struct{ n atomic.Int64 }

func (c *rateTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *rateTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func rateRows(t testing.TB, pg *pgenv.PG, table string) int {
	t.Helper()
	var n int
	if err := pg.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{pg.Schema, table}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every decision is one statement, whatever the algorithms, the number of
// limits and the outcome.
func TestRateOneStatement(t *testing.T) {
	t.Parallel()
	p, _, tr := rateProvider(t, postgres.Config{})
	ctx := context.Background()
	all := []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 3, Period: time.Hour},
		{Algorithm: batontype.SlidingLog, Rate: 3, Period: time.Hour},
		{Algorithm: batontype.SlidingWindow, Rate: 3, Period: time.Hour},
		{Algorithm: batontype.TokenBucket, Rate: 3, Period: time.Hour},
		{Algorithm: batontype.GCRA, Rate: 3, Period: time.Hour},
	}
	requests := []lockprovider.RateRequest{{Key: "all", N: 1, Limits: all}}
	for _, l := range all {
		requests = append(requests, lockprovider.RateRequest{Key: "one-" + l.Algorithm.String(), N: 1, Limits: []batontype.RateLimit{l}})
	}
	for _, r := range requests {
		for i := range 5 { // admitted, then refused
			before := tr.n.Load()
			res, err := p.RateLimit(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if n := tr.n.Load() - before; n != 1 {
				t.Errorf("%s decision %d (allowed=%v) issued %d statements; want 1", r.Key, i, res.Allowed, n)
			}
		}
	}
}

func TestRateTablePersistence(t *testing.T) {
	t.Parallel()
	persistence := func(pg *pgenv.PG, table string) string {
		var s string
		if err := pg.Pool.QueryRow(context.Background(), "SELECT relpersistence::text FROM pg_class WHERE oid = $1::regclass",
			pgx.Identifier{pg.Schema, table}.Sanitize()).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	_, pg, _ := rateProvider(t, postgres.Config{})
	if got := persistence(pg, postgres.DefaultRateTable); got != "u" {
		t.Errorf("default rate table persistence %q; want u (UNLOGGED)", got)
	}
	// Migrate is idempotent, and follows RateLogged both ways.
	for _, logged := range []bool{false, true, true, false} {
		q, err := postgres.New(pg.Pool, &postgres.Config{Schema: pg.Schema, RateLogged: logged})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Migrate(context.Background()); err != nil {
			t.Fatalf("Migrate(RateLogged=%v): %v", logged, err)
		}
		want := map[bool]string{false: "u", true: "p"}[logged]
		if got := persistence(pg, postgres.DefaultRateTable); got != want {
			t.Errorf("RateLogged=%v: persistence %q; want %q", logged, got, want)
		}
		if _, err := q.RateLimit(context.Background(), lockprovider.RateRequest{Key: "k", N: 1,
			Limits: []batontype.RateLimit{{Algorithm: batontype.GCRA, Rate: 10, Period: time.Second}}}); err != nil {
			t.Fatal(err)
		}
	}
	// A custom rate table gets its own function.
	q, pg2, _ := rateProvider(t, postgres.Config{RateTable: "my_limits", RateLogged: true})
	if got := persistence(pg2, "my_limits"); got != "p" {
		t.Errorf("logged custom table persistence %q; want p", got)
	}
	res, err := q.RateLimit(context.Background(), lockprovider.RateRequest{Key: "k", N: 2,
		Limits: []batontype.RateLimit{{Algorithm: batontype.FixedWindow, Rate: 2, Period: time.Hour}}})
	if err != nil || !res.Allowed || res.Limits[0].Remaining != 0 {
		t.Fatalf("custom table: %+v, %v", res, err)
	}
	if n := rateRows(t, pg2, "my_limits"); n != 1 {
		t.Errorf("%d rows in my_limits; want 1", n)
	}
}

// Expired rows are swept: SweepRates deletes them all, and decisions delete
// them as they go so the table stays bounded.
func TestRateSweep(t *testing.T) {
	t.Parallel()
	p, pg, _ := rateProvider(t, postgres.Config{})
	ctx := context.Background()
	short := []batontype.RateLimit{{Algorithm: batontype.FixedWindow, Rate: 1, Period: time.Millisecond}}
	long := []batontype.RateLimit{{Algorithm: batontype.GCRA, Rate: 1, Period: time.Hour}}
	for i := range 300 {
		if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: fmt.Sprint("short-", i), N: 1, Limits: short}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "long", N: 1, Limits: long}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // the 1 ms windows above end: their rows are expired
	before := rateRows(t, pg, postgres.DefaultRateTable)
	n, err := p.SweepRates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := rateRows(t, pg, postgres.DefaultRateTable); after != 1 || int(n) != before-1 {
		t.Fatalf("SweepRates deleted %d of %d rows, %d left; want all but the live one", n, before, after)
	}
	if res, _ := p.RateLimit(ctx, lockprovider.RateRequest{Key: "long", N: 1, Limits: long}); res.Allowed {
		t.Fatal("the live row was swept: a second request within the hour was admitted")
	}

	// 4000 decisions on fresh keys whose rows expire at once: each call
	// sweeps with probability 1/256 (up to 2048 rows), so unless the last
	// 3000 calls all skipped it (p ≈ 1e-5) at most 3000 rows remain.
	for i := range 4000 {
		if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: fmt.Sprint("churn-", i), N: 1, Limits: short}); err != nil {
			t.Fatal(err)
		}
	}
	if rows := rateRows(t, pg, postgres.DefaultRateTable); rows > 3000 {
		t.Errorf("%d rows after 4000 single-use keys; want the sweep to keep it at most 3000", rows)
	}
}

// Requests sharing limits in different orders never deadlock: rows are
// locked in one order.
func TestRateNoDeadlock(t *testing.T) {
	t.Parallel()
	p, _, _ := rateProvider(t, postgres.Config{})
	a := batontype.RateLimit{Algorithm: batontype.GCRA, Rate: 1000, Period: time.Second}
	b := batontype.RateLimit{Algorithm: batontype.FixedWindow, Rate: 1000, Period: time.Second}
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			limits := []batontype.RateLimit{a, b}
			if w%2 == 1 {
				limits = []batontype.RateLimit{b, a}
			}
			for range 100 {
				if _, err := p.RateLimit(context.Background(), lockprovider.RateRequest{Key: "hot", N: 1, Limits: limits}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestRateValidation(t *testing.T) {
	t.Parallel()
	p, _, tr := rateProvider(t, postgres.Config{})
	before := tr.n.Load()
	_, err := p.RateLimit(context.Background(), lockprovider.RateRequest{Key: "", N: 1,
		Limits: []batontype.RateLimit{{Algorithm: batontype.GCRA, Rate: 1, Period: time.Second}}})
	if !errors.Is(err, batontype.ErrInvalidName) {
		t.Errorf("empty key: %v", err)
	}
	if tr.n.Load() != before {
		t.Error("an invalid request reached the database")
	}
}
