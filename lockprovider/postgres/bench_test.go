package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// The comparison with a raw ShedLock-style upsert lives in the bench module
// (bench/cmd/benchrun), beside the other side-by-side comparisons.

// benchProvider is a migrated provider on a pool of its own, large enough
// for 16 concurrent workers, on a private schema.
func benchProvider(b testing.TB) *postgres.Provider {
	b.Helper()
	pg := pgenv.Schema(b)
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 16
	cfg.MinConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	p, err := postgres.New(pool, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkProvider is the shared provider benchmark (lockprovidertest.Bench).
func BenchmarkProvider(b *testing.B) {
	lockprovidertest.Bench(b, benchProvider(b))
}

// BenchmarkHandoff is the shared hand-off benchmark
// (lockprovidertest.BenchHandoff): the waiter is woken by LISTEN/NOTIFY.
func BenchmarkHandoff(b *testing.B) {
	lockprovidertest.BenchHandoff(b, benchProvider(b))
}
