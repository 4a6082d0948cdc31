package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// Every Control operation is one statement.
func TestControlOneRoundTrip(t *testing.T) {
	t.Parallel()
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
	one := func(what string, f func() error) {
		t.Helper()
		before := cnt.n.Load()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := cnt.n.Load() - before; n != 1 {
			t.Errorf("%s sent %d statements, want 1", what, n)
		}
	}
	var r batontype.RunRequest
	one("SetPaused", func() error { return p.SetPaused(ctx, "job", true) })
	one("RequestRun", func() (err error) { r, err = p.RequestRun(ctx, batontype.RunRequest{Job: "job"}); return err })
	one("ControlState", func() error { _, err := p.ControlState(ctx); return err })
	one("ClaimRun", func() error { _, err := p.ClaimRun(ctx, r.ID); return err })
}
