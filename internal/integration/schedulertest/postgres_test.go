package schedulertest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
)

func init() {
	setups["postgres"] = func(t *testing.T, pg *pgenv.PG, spec *instanceSpec) {
		spec.URL = pg.URL // the lease table lives next to the witness tables
		p, err := pgprovider.New(pg.Pool, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	providers["postgres"] = func(ctx context.Context, spec instanceSpec, in *instance) (lockprovider.Provider, error) {
		cfg, err := pgxpool.ParseConfig(spec.URL)
		if err != nil {
			return nil, err
		}
		cfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		in.closers = append(in.closers, pool.Close)
		if err := warm(ctx, pool); err != nil {
			return nil, err
		}
		return pgprovider.New(pool, nil)
	}
}
