package main_test

import (
	"context"
	"testing"
	"time"

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

// --grace 0 means no grace, not Check's default of one minute: a tick 30 s
// ago that no replica ran is missed with --grace 0, and not yet due with
// the default grace (the tick before it ran).
func TestCLICheckGraceZero(t *testing.T) {
	prefix := testenv.Prefix(t)
	p, err := redisprovider.New(testenv.Redis(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tick := now.Add(-30 * time.Second).Truncate(time.Second)
	offset := time.Duration(tick.UnixNano() % int64(time.Hour))
	inst := lockprovider.Instance{LockedBy: "app-1", Started: now.Add(-3 * time.Hour), Jobs: []lockprovider.JobSpec{
		{Name: "nightly", Schedule: "@every 1h0m0s offset " + offset.String(), Locked: true, AtMostFor: time.Minute}}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	ran(t, p, tick.Add(-time.Hour), lockprovider.OutcomeSucceeded, "")
	args := []string{"--redis", testenv.RedisURL(t), "--redis-prefix", prefix}
	wantCode(t, exitOK, "", append([]string{"jobs", "check"}, args...)...)
	wantCode(t, exitProblem, "", append([]string{"jobs", "check", "--grace", "0"}, args...)...)
}
