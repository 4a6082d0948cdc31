package main_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// cliBackend is a provider on a real server and the flags that point
// the CLI at it.
type cliBackend struct {
	name string
	args []string
	p    lockprovider.Provider
}

// cliBackends returns a Redis provider under a prefix of the test's own
// and a migrated PostgreSQL provider in a schema of its own, and a
// migrated MySQL provider in a database of its own (mysql_test.go).
func cliBackends(t *testing.T) []cliBackend {
	t.Helper()
	prefix := testenv.Prefix(t)
	rp, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	pg := pgenv.Schema(t)
	pp, err := pgprovider.New(pg.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return []cliBackend{
		{"redis", []string{"--redis", testenv.RedisURL(t), "--redis-prefix", prefix}, rp},
		{"postgres", []string{"--postgres", pg.URL}, pp},
		mysqlBackend(t),
	}
}

// jobs check exits zero when every due tick ran and succeeded: the
// counterpart of TestCLI's missed and failed ticks, on real servers.
func TestCLICheckAllRan(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			due := seed(t, s.p)
			ran(t, s.p, due, batontype.OutcomeSucceeded, "")
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
	t.Parallel()
	prefix := testenv.Prefix(t)
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tick := now.Add(-30 * time.Second).Truncate(time.Second)
	offset := time.Duration(tick.UnixNano() % int64(time.Hour))
	inst := batontype.Instance{LockedBy: "app-1", Started: now.Add(-3 * time.Hour), Jobs: []batontype.JobSpec{
		{Name: "nightly", Schedule: "@every 1h0m0s offset " + offset.String(), Locked: true, AtMostFor: time.Minute}}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	ran(t, p, tick.Add(-time.Hour), batontype.OutcomeSucceeded, "")
	args := []string{"--redis", testenv.RedisURL(t), "--redis-prefix", prefix}
	wantCode(t, exitOK, "", append([]string{"jobs", "check"}, args...)...)
	wantCode(t, exitProblem, "", append([]string{"jobs", "check", "--grace", "0"}, args...)...)
}

// A run whose process died (no end, its lease gone) reads "unfinished" in
// jobs runs and jobs ls, as jobs check calls it, not "running" like a run
// still going; JSON marks it with "unfinished": true.
func TestCLIUnfinishedRun(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			due := seed(t, s.p)
			open := func(tick time.Time) int64 {
				t.Helper()
				l, err := s.p.(lockprovider.Ledger).AcquireRun(t.Context(), lockprovider.AcquireParams{Name: "nightly",
					Owner: lockprovider.NewOwner(), LockedBy: "app-1", AtMostFor: time.Hour, Tick: tick}, lockprovider.RunStart{})
				if err != nil {
					t.Fatal(err)
				}
				return l.Token
			}
			cmd := func(code int, args ...string) string {
				t.Helper()
				return wantCode(t, code, "", append(args, s.args...)...)
			}
			// The process holding the due tick's run dies: its lease ends
			// (freed here by hand) and its run never gets an end.
			dead := open(due)
			if _, err := s.p.(lockprovider.Admin).ForceRelease(t.Context(), lockprovider.ForceReleaseParams{Name: "nightly", Token: dead}); err != nil {
				t.Fatal(err)
			}
			if out := cmd(exitOK, "jobs", "ls", "--wide"); !strings.Contains(out, "unfinished on app-1") {
				t.Errorf("jobs ls: the dead last run is not unfinished:\n%s", out)
			}
			if out := cmd(exitProblem, "jobs", "check"); !strings.Contains(out, "unfinished") || !strings.Contains(out, "never ended") {
				t.Errorf("jobs check:\n%s", out)
			}
			live := open(due.Add(time.Second)) // a run still going, lease held
			out := cmd(exitOK, "jobs", "runs", "nightly")
			for _, line := range strings.Split(out, "\n") {
				switch {
				case strings.Contains(line, "lock force-released by"): // the note under the table, not a row
				case strings.Contains(line, strconv.FormatInt(dead, 10)) && !strings.Contains(line, " unfinished "):
					t.Errorf("jobs runs: the dead run is not unfinished: %s", line)
				case strings.Contains(line, strconv.FormatInt(live, 10)) && !strings.Contains(line, " running "):
					t.Errorf("jobs runs: the live run is not running: %s", line)
				}
			}
			var runs []struct {
				Token      int64  `json:"token"`
				Outcome    string `json:"outcome"`
				Unfinished bool   `json:"unfinished"`
			}
			if err := json.Unmarshal([]byte(cmd(exitOK, "jobs", "runs", "nightly", "-o", "json")), &runs); err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, r := range runs {
				if r.Token == dead || r.Token == live {
					seen++
					if r.Outcome != "" || r.Unfinished != (r.Token == dead) {
						t.Errorf("jobs runs -o json: token %d (dead %d, live %d): outcome %q unfinished %v", r.Token, dead, live, r.Outcome, r.Unfinished)
					}
				}
			}
			if seen != 2 {
				t.Errorf("jobs runs -o json lists %d of the 2 open runs: %+v", seen, runs)
			}
			if out := cmd(exitOK, "jobs", "ls", "--wide"); !strings.Contains(out, "running on app-1") {
				t.Errorf("jobs ls: the live last run is not running:\n%s", out)
			}
		})
	}
}
