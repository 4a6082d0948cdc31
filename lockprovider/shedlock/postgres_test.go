package shedlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// newYork is the negative-offset zone with DST that the JVM-local-time
// tests use.
func newYork(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	return loc
}

// pgModes are the Java configurations every Postgres test runs against.
func pgModes(t testing.TB) []struct {
	name string
	cfg  shedlock.PostgresConfig
} {
	return []struct {
		name string
		cfg  shedlock.PostgresConfig
	}{
		{"DBTime", shedlock.PostgresConfig{TimeMode: shedlock.DBTime}},
		{"ClientTimeUTC", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeUTC}},
		{"ClientTimeNewYork", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: newYork(t)}},
		{"ClientTimeNewYorkTimestamptz", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: newYork(t), Columns: shedlock.Timestamptz}},
	}
}

// newPG returns a migrated provider on a ShedLock table in a private schema.
func newPG(t testing.TB, cfg shedlock.PostgresConfig) (*shedlock.Postgres, *testenv.PG) {
	t.Helper()
	pg := testenv.Postgres(t)
	p, err := shedlock.NewPostgres(pg.Pool, cfg)
	if err != nil {
		t.Fatalf("NewPostgres: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, pg
}

func TestPostgresConformance(t *testing.T) {
	for _, m := range pgModes(t) {
		t.Run(m.name, func(t *testing.T) {
			lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
				p, _ := newPG(t, m.cfg)
				return p
			})
		})
	}
}
