package ratelimittest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
	"github.com/baton-go/baton/lockprovider/postgres"
)

type providerCase struct {
	name string
	new  func(t testing.TB) lockprovider.RateLimiter
}

var providers = []providerCase{
	{"memory", func(t testing.TB) lockprovider.RateLimiter { return newMemory(t, nil) }},
	{"redis", func(t testing.TB) lockprovider.RateLimiter { return newRedisProvider(t) }},
	{"postgres", func(t testing.TB) lockprovider.RateLimiter { return newPostgresProvider(t) }},
	{"mysql", func(t testing.TB) lockprovider.RateLimiter { return newMySQLProvider(t) }},
}

func newPostgresProvider(t testing.TB) *postgres.Provider {
	t.Helper()
	pg := pgenv.Schema(t)
	// A pool large enough for the bound checker (5 providers × 8 stay well under
	// max_connections).
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
	return p
}

func newMySQLProvider(t testing.TB) *mysql.Provider {
	t.Helper()
	my := mysqlenv.Database(t)
	p, err := mysql.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}
