package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// The rate-limit conformance suite. All subtests share one migrated
// provider (the suite's keys never repeat) on a pool with room for the
// suite's concurrent load.
func TestRateConformance(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	pool, err := pgxpool.New(context.Background(), pg.URL+"&pool_max_conns=8")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p, err := postgres.New(pool, &postgres.Config{Schema: pg.Schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	lockprovidertest.RunRate(t, func(*testing.T) lockprovider.RateLimiter { return p })
}
