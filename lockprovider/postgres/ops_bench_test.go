package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// go test -run '^$' -bench Ledger -cpu 2 ./lockprovider/postgres/
func BenchmarkLedger(b *testing.B) {
	lockprovidertest.BenchLedger(b, benchProvider(b))
}

// queryCounter counts the statements a pool sends.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}
func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The ledger's claim and release are one statement each, as the plain ones.
func TestLedgerOneRoundTrip(t *testing.T) {
	pg := pgenv.Schema(t)
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	cnt := &queryCounter{}
	cfg.ConnConfig.Tracer = cnt
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p, err := postgres.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	owner := lockprovider.NewOwner()
	before := cnt.n.Load()
	l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: "one-rt", Owner: owner, AtMostFor: time.Minute, Tick: time.Now()}, lockprovider.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	mid := cnt.n.Load()
	err = p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: "one-rt", Owner: owner}, lockprovider.RunEnd{
		Run: batontype.RunRecord{Job: "one-rt", Token: l.Token, Tick: l.Tick, Started: l.GrantedAt}, Outcome: batontype.OutcomeSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if mid-before != 1 || cnt.n.Load()-mid != 1 {
		t.Errorf("AcquireRun sent %d statements, ReleaseRun %d; want 1 each", mid-before, cnt.n.Load()-mid)
	}
}
