package main_test

import (
	"context"
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// jobs check exits zero when every due tick ran and succeeded: the
// counterpart of TestCLI's missed and failed ticks, on real servers.
func TestCLICheckAllRan(t *testing.T) {
	prefix := testenv.Prefix(t)
	rp, err := redisprovider.New(testenv.Redis(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	pg := testenv.Postgres(t)
	pp, err := pgprovider.New(pg.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name string
		args []string
		p    lockprovider.Provider
	}{
		{"redis", []string{"--redis", testenv.RedisURL(t), "--redis-prefix", prefix}, rp},
		{"postgres", []string{"--postgres", pg.URL}, pp},
	} {
		t.Run(s.name, func(t *testing.T) {
			due := seed(t, s.p)
			ran(t, s.p, due, lockprovider.OutcomeSucceeded, "")
			out := wantCode(t, exitOK, "", append([]string{"jobs", "check"}, s.args...)...)
			if out == "" {
				t.Error("jobs check printed nothing")
			}
		})
	}
}
