package main_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
)

// What an operator sees when something is wrong at 3 a.m.: every error
// says what to do, one failing backend hides no other's rows, and the
// tables fit a terminal.

// errorLine runs baton and checks its exit code and that stderr holds
// every one of want and none of bad.
func errorLine(t *testing.T, code int, want, bad []string, args ...string) (string, string) {
	t.Helper()
	out, errs, got := baton(t, "", args...)
	if got != code {
		t.Errorf("baton %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, out, errs)
	}
	for _, w := range want {
		if !strings.Contains(errs, w) {
			t.Errorf("baton %s: stderr lacks %q:\n%s", strings.Join(args, " "), w, errs)
		}
	}
	for _, b := range bad {
		if strings.Contains(errs, b) {
			t.Errorf("baton %s: stderr has %q:\n%s", strings.Join(args, " "), b, errs)
		}
	}
	return out, errs
}

// A URL without a scheme gets a hint, never url.Parse's text, and a URL
// with credentials is never echoed.
func TestCLIURLHints(t *testing.T) {
	t.Parallel()
	errorLine(t, exitUsage, []string{"redis://127.0.0.1:6379"}, []string{"first path segment"}, "locks", "ls", "--redis", "127.0.0.1:6379")
	errorLine(t, exitUsage, []string{"postgres://127.0.0.1:5432"}, []string{"keyword/value"}, "locks", "ls", "--postgres", "127.0.0.1:5432")
	errorLine(t, exitUsage, []string{"redis://"}, []string{"s3cret"}, "locks", "ls", "--redis", "user:s3cret@127.0.0.1:6379")
	errorLine(t, exitUsage, []string{"postgres://"}, []string{"s3cret"}, "locks", "ls", "--postgres", "postgres://u:s3cret@[bad/db")
	// From the environment, the hint names the variable.
	cmd := exec.Command(binary, "locks", "ls")
	cmd.Env = append(os.Environ(), "BATON_REDIS_URL=localhost:6379", "BATON_POSTGRES_URL=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "$BATON_REDIS_URL \"localhost:6379\" has no scheme: did you mean redis://localhost:6379?") {
		t.Errorf("BATON_REDIS_URL without a scheme: %v\n%s", err, out)
	}
}

// pgURL returns the test server's URL with edit applied.
func pgURL(t *testing.T, edit func(u *url.URL)) string {
	t.Helper()
	u, err := url.Parse(testenv.PostgresURL(t))
	if err != nil || u.Scheme == "" {
		t.Fatalf("TEST_DATABASE_URL must be a URL for this test: %v", err)
	}
	edit(u)
	return u.String()
}

// Tables that are not there (an unmigrated database, a wrong
// --pg-schema) say "run Migrate / check --pg-schema"; a wrong role or
// database says which, not only "backend unavailable".
func TestCLIPostgresHints(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t) // not migrated
	missing := []string{"run Migrate", "--pg-schema", "does not exist"}
	for _, args := range [][]string{
		{"locks", "ls", "--postgres", pg.URL},
		{"jobs", "ls", "--postgres", pg.URL},
		{"jobs", "check", "--postgres", pg.URL},
		{"limits", "ls", "--postgres", pg.URL},
		{"locks", "ls", "--postgres", testenv.PostgresURL(t), "--pg-schema", "no_such_schema_" + testenv.Unique()},
	} {
		errorLine(t, exitBackend, missing, nil, args...)
	}
	role := pgURL(t, func(u *url.URL) { u.User = url.User("no_such_role_" + testenv.Unique()) })
	errorLine(t, exitBackend, []string{"refused the role", "does not exist", "check the user"}, nil, "locks", "ls", "--postgres", role)
	db := pgURL(t, func(u *url.URL) { u.Path = "/no_such_db_" + testenv.Unique() })
	errorLine(t, exitBackend, []string{"wrong database", "does not exist", "check the database name"}, nil, "jobs", "ls", "--postgres", db)
}

// With both backends, a failing PostgreSQL (here unmigrated) hides no
// Redis row: each backend prints its rows or its own error line, and the
// exit code is still 4.
func TestCLIOneBackendFails(t *testing.T) {
	t.Parallel()
	redis := cliBackends(t)[0]
	seed(t, redis.p)
	bad := pgenv.Schema(t) // not migrated
	args := append(append([]string{}, redis.args...), "--postgres", bad.URL)
	for _, tc := range []struct {
		cmd  []string
		want string // on stdout, from Redis
	}{
		{[]string{"locks", "ls"}, "report"},
		{[]string{"locks", "get", "report"}, "host-a:1"},
		{[]string{"jobs", "ls"}, "nightly"},
		{[]string{"jobs", "runs", "nightly"}, "succeeded"},
		{[]string{"jobs", "check"}, "missed"},
		{[]string{"limits", "ls"}, "user:42"},
		{[]string{"limits", "get", "user:42"}, "user:42"},
	} {
		out, errs := errorLine(t, exitBackend, []string{"baton: postgres: ", "run Migrate"}, []string{"baton: redis"}, append(tc.cmd, args...)...)
		if !strings.Contains(out, tc.want) || !strings.Contains(out, "redis") {
			t.Errorf("%v with PostgreSQL failing: Redis rows missing (want %q):\n%s", tc.cmd, tc.want, out)
		}
		if n := strings.Count(errs, "baton: postgres: "); n != 1 {
			t.Errorf("%v: %d PostgreSQL error lines, want 1:\n%s", tc.cmd, n, errs)
		}
	}
	// jobs check -o json carries the failed backend with its error.
	out, _ := errorLine(t, exitBackend, nil, nil, append([]string{"jobs", "check", "-o", "json"}, args...)...)
	var rep []struct {
		Backend, Error string
		OK             bool
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep) != 2 || rep[1].Backend != "postgres" || rep[1].OK || !strings.Contains(rep[1].Error, "run Migrate") {
		t.Errorf("jobs check -o json with PostgreSQL failing: %v\n%s", err, out)
	}
}

// jobs ls and locks ls fit 120 columns by default; --wide shows whole
// errors (cut otherwise, with a note), absolute times and replica names.
func TestCLIWidth(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			due := seed(t, s.p)
			// A deployment's names: long jobs and pod replicas.
			for i := range 3 {
				inst := batontype.Instance{LockedBy: fmt.Sprintf("api-7f9c8d5b4-x2k4%d:41", i), Started: time.Now().Add(-time.Hour), Jobs: []batontype.JobSpec{
					{Name: "billing-sync-nightly", Schedule: "0 2 * * *", TimeZone: "Europe/Berlin", Locked: true, AtMostFor: time.Hour}}}
				if err := s.p.(lockprovider.Registry).Register(t.Context(), inst, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "billing-sync-nightly", Owner: lockprovider.NewOwner(),
				LockedBy: "api-7f9c8d5b4-x2k40:41", AtMostFor: time.Hour, AtLeastFor: 30 * time.Minute}); err != nil {
				t.Fatal(err)
			}
			msg := "connect to billing: " + strings.Repeat("x", 80) + " END"
			ran(t, s.p, due, batontype.OutcomeFailed, msg)
			run := func(args ...string) string {
				t.Helper()
				return wantCode(t, exitOK, "", append(args, s.args...)...)
			}
			for _, cmd := range [][]string{{"jobs", "ls"}, {"locks", "ls"}, {"limits", "ls"}} {
				out := run(cmd...)
				for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
					if len(line) > 120 {
						t.Errorf("%v: a line of %d columns:\n%s", cmd, len(line), out)
					}
				}
			}
			if out := run("jobs", "ls", "--wide"); !regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).MatchString(out) || !strings.Contains(out, "app-1") {
				t.Errorf("jobs ls --wide without absolute times:\n%s", out)
			}
			out, errs, _ := baton(t, "", append([]string{"jobs", "runs", "nightly"}, s.args...)...)
			if strings.Contains(out, "x END") || !strings.Contains(out, "...") || !strings.Contains(errs, "--wide") {
				t.Errorf("jobs runs: the long error is not cut with a note:\nstdout: %s\nstderr: %s", out, errs)
			}
			if out := run("jobs", "runs", "nightly", "--wide"); !strings.Contains(out, msg) {
				t.Errorf("jobs runs --wide: the error is not whole:\n%s", out)
			}
			// jobs check gives the whole error, --wide or not.
			if out := wantCode(t, exitProblem, "", append([]string{"jobs", "check"}, s.args...)...); !strings.Contains(out, msg) {
				t.Errorf("jobs check cuts the error:\n%s", out)
			}
		})
	}
}

// JSON durations are numbers (milliseconds) beside Go's text.
func TestCLIJSONDurations(t *testing.T) {
	t.Parallel()
	s := cliBackends(t)[0]
	seed(t, s.p)
	var jobs []map[string]any
	if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "ls", "-o", "json"}, s.args...)...)), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("jobs ls -o json: %v %v", jobs, err)
	}
	if jobs[0]["at_most_for"] != "1h0m0s" || jobs[0]["at_most_for_ms"] != float64(time.Hour.Milliseconds()) || jobs[0]["at_least_for_ms"] != float64(60000) {
		t.Errorf("jobs ls -o json durations: %v", jobs[0])
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "runs", "nightly", "-o", "json"}, s.args...)...)), &runs); err != nil || len(runs) == 0 {
		t.Fatalf("jobs runs -o json: %v %v", runs, err)
	}
	if d, err := time.ParseDuration(runs[0]["duration"].(string)); err != nil || runs[0]["duration_ms"] != float64(d.Milliseconds()) {
		t.Errorf("jobs runs -o json: duration %v, duration_ms %v", runs[0]["duration"], runs[0]["duration_ms"])
	}
	var limits []map[string]any
	if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"limits", "get", "user:42", "--limit", "fixed_window:2/1h", "-o", "json"}, s.args...)...)), &limits); err != nil || len(limits) != 1 {
		t.Fatalf("limits get -o json: %v %v", limits, err)
	}
	if ms, ok := limits[0]["reset_after_ms"].(float64); limits[0]["period_ms"] != float64(time.Hour.Milliseconds()) || !ok || ms <= 0 || ms > float64(time.Hour.Milliseconds()) {
		t.Errorf("limits get -o json durations: %v", limits[0])
	}
}

// A --limit whose algorithm and period match none of a key's stored
// state is not the application's limit: its state is "unknown", with a
// line saying so, never a confident "ok".
func TestCLILimitContradicts(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			seed(t, s.p) // user:42 used 2 of fixed_window 2/1h
			args := append([]string{"limits", "get", "user:42", "--limit", "gcra:100/1m", "-o", "json"}, s.args...)
			out, _ := errorLine(t, exitOK, []string{"fixed_window/1h0m0s", "not the limit the application applies"}, nil, args...)
			var ls []struct {
				State     string `json:"state"`
				Remaining *int64 `json:"remaining"`
			}
			if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls) != 1 || ls[0].State != "unknown" || ls[0].Remaining != nil {
				t.Errorf("limits get with a contradicting --limit: %v\n%s", err, out)
			}
			// The matching limit is judged as before.
			if out := wantCode(t, exitOK, "", append([]string{"limits", "get", "user:42", "--limit", "fixed_window:2/1h"}, s.args...)...); !strings.Contains(out, "over") {
				t.Errorf("limits get with the matching --limit:\n%s", out)
			}
			// limits ls says how many keys no --limit judged.
			errorLine(t, exitOK, []string{"1 key state(s)", "not judged"}, nil, append([]string{"limits", "ls", "--limit", "gcra:100/1m"}, s.args...)...)
		})
	}
}

// jobs pause acts only on the backends that know the job: a Redis-only
// job is not paused on PostgreSQL; resume clears only where it is set.
func TestCLIPauseOnlyWhereKnown(t *testing.T) {
	t.Parallel()
	bs := cliBackends(t)
	redis, pg := bs[0], bs[1]
	seed(t, redis.p) // nightly: registered on Redis only
	var args []string
	for _, b := range bs {
		args = append(args, b.args...)
	}
	paused := func(p lockprovider.Provider) bool {
		t.Helper()
		st, err := p.(lockprovider.Control).ControlState(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return st.IsPaused("nightly")
	}
	out, _ := errorLine(t, exitOK, nil, []string{"warning"}, append([]string{"jobs", "pause", "nightly"}, args...)...)
	if !paused(redis.p) || paused(pg.p) || paused(bs[2].p) || strings.Contains(out, "postgres") || strings.Contains(out, "mysql") {
		t.Errorf("jobs pause of a Redis-only job: redis %v, postgres %v; want only redis\n%s", paused(redis.p), paused(pg.p), out)
	}
	errorLine(t, exitOK, nil, []string{"warning"}, append([]string{"jobs", "resume", "nightly"}, args...)...)
	if paused(redis.p) || paused(pg.p) {
		t.Error("still paused after jobs resume")
	}
	// A job no backend knows is paused everywhere, with a warning.
	errorLine(t, exitOK, []string{"warning", "every backend"}, nil, append([]string{"jobs", "pause", "not-deployed-yet"}, args...)...)
	for _, b := range bs {
		st, _ := b.p.(lockprovider.Control).ControlState(t.Context())
		if !st.IsPaused("not-deployed-yet") {
			t.Errorf("%s: a job no backend knows is not paused", b.name)
		}
	}
}

// jobs check names the holder of a stuck job: a missed tick whose lease
// is held says by whom.
func TestCLICheckNamesHolder(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			seed(t, s.p)
			l, err := s.p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), LockedBy: "stuck-host:7", AtMostFor: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			out := wantCode(t, exitProblem, "", append([]string{"jobs", "check"}, s.args...)...)
			if !strings.Contains(out, "missed") || !strings.Contains(out, "held by stuck-host:7") {
				t.Errorf("jobs check of a stuck job does not name the holder:\n%s", out)
			}
			var rep []struct {
				Problems []struct {
					Kind   string `json:"kind"`
					Holder *struct {
						LockedBy string `json:"locked_by"`
						Token    int64  `json:"token"`
					} `json:"holder"`
				} `json:"problems"`
			}
			if err := json.Unmarshal([]byte(wantCode(t, exitProblem, "", append([]string{"jobs", "check", "-o", "json"}, s.args...)...)), &rep); err != nil ||
				len(rep) != 1 || len(rep[0].Problems) != 1 || rep[0].Problems[0].Holder == nil || rep[0].Problems[0].Holder.Token != l.Token || rep[0].Problems[0].Holder.LockedBy != "stuck-host:7" {
				t.Errorf("jobs check -o json: %v %+v; want the holder with token %d", err, rep, l.Token)
			}
		})
	}
}

// Paused is a state of its own in jobs ls, jobs check and JSON, whether
// paused cluster-wide (jobs pause) or on every replica's own instance
// (scheduler Job.Pause, registered as the option "paused"); a job paused
// on some replicas only still runs on the others, so it is not paused.
func TestCLIPausedState(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			due := seed(t, s.p) // nightly on app-1; its due tick was missed
			reg := s.p.(lockprovider.Registry)
			insts, err := reg.Instances(t.Context())
			if err != nil || len(insts) != 1 {
				t.Fatal(insts, err)
			}
			register := func(name string, paused bool) {
				t.Helper()
				inst := insts[0]
				inst.LockedBy = name
				inst.Jobs = []batontype.JobSpec{inst.Jobs[0]}
				if paused {
					inst.Jobs[0].Options = []string{"paused"}
				}
				if err := reg.Register(t.Context(), inst, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			type jobLS struct {
				State    string   `json:"state"`
				Paused   bool     `json:"paused"`
				PausedOn []string `json:"paused_on"`
				Options  []string `json:"options"`
			}
			ls := func() jobLS {
				t.Helper()
				var out []jobLS
				if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "ls", "-o", "json"}, s.args...)...)), &out); err != nil || len(out) != 1 {
					t.Fatalf("jobs ls -o json: %v %+v", err, out)
				}
				return out[0]
			}
			if j := ls(); j.State != "missed" || j.Paused {
				t.Errorf("before any pause: %+v, want missed", j)
			}
			register("app-2", true) // paused on app-2 only: app-1 still runs it
			if j := ls(); j.State != "missed" || j.Paused || len(j.PausedOn) != 1 || len(j.Options) != 0 {
				t.Errorf("paused on one replica of two: %+v, want missed, not paused, paused_on [app-2]", j)
			}
			wantCode(t, exitProblem, "", append([]string{"jobs", "check"}, s.args...)...)
			register("app-1", true) // now on every replica
			if j := ls(); j.State != "paused" || !j.Paused || len(j.PausedOn) != 2 {
				t.Errorf("paused on every replica: %+v, want paused", j)
			}
			out := wantCode(t, exitOK, "", append([]string{"jobs", "check", "nightly"}, s.args...)...)
			if strings.Contains(out, "missed") || !strings.Contains(out, "paused, not checked: nightly") {
				t.Errorf("jobs check of a job paused on every replica:\n%s", out)
			}
			if out := wantCode(t, exitOK, "", append([]string{"jobs", "ls"}, s.args...)...); !strings.Contains(out, " paused ") {
				t.Errorf("jobs ls (table):\n%s", out)
			}
			// Back to running on both; then paused cluster-wide.
			register("app-1", false)
			register("app-2", false)
			ran(t, s.p, due, batontype.OutcomeSucceeded, "")
			if j := ls(); j.State != "ok" {
				t.Errorf("after the due tick ran: %+v, want ok", j)
			}
			wantCode(t, exitOK, "", append([]string{"jobs", "pause", "nightly"}, s.args...)...)
			if j := ls(); j.State != "paused" || !j.Paused {
				t.Errorf("paused cluster-wide: %+v, want paused", j)
			}
		})
	}
}

// baton jobs alone prints the group's usage; serve --help lists every
// action --actions enables.
func TestCLIGroupUsage(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"jobs", "locks", "limits"} {
		errorLine(t, exitUsage, []string{"Usage: baton [flags] " + g + " <command>", g + " ls"}, []string{"unknown command"}, g)
		if out := wantCode(t, exitOK, "", g, "--help"); !strings.Contains(out, g+" ls") {
			t.Errorf("baton %s --help:\n%s", g, out)
		}
	}
	errorLine(t, exitUsage, []string{`unknown command "jobs frob"`, "jobs ls"}, nil, "jobs", "frob")
	cmd := exec.Command(binary, "serve", "--help")
	cmd.Env = append(os.Environ(), "BATON_REDIS_URL=", "BATON_POSTGRES_URL=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"force-release", "reset", "run now", "pause", "resume"} {
		if !regexp.MustCompile(`(?s)-actions.*` + a).Match(out) {
			t.Errorf("serve --help: --actions does not list %q:\n%s", a, out)
		}
	}
}

// `locks release --force` records on the run it ended who released it
// ("cli:$USER@HOST") and when, in the backend: `jobs runs` shows it in
// its table and its JSON, for every backend.
func TestCLIForceReleaseRecorded(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	want := "cli:night-operator@" + host
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			l, err := s.p.(lockprovider.Ledger).AcquireRun(t.Context(), lockprovider.AcquireParams{Name: "stuck", Owner: lockprovider.NewOwner(),
				LockedBy: "app-1", AtMostFor: time.Hour, Tick: time.Now().Truncate(time.Minute)}, lockprovider.RunStart{})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, append([]string{"locks", "release", "--force", "--yes", "stuck"}, s.args...)...)
			cmd.Env = append(os.Environ(), "BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_MYSQL_URL=", "USER=night-operator")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("locks release --force: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "marked force-released by "+want) {
				t.Errorf("locks release --force does not say how it is recorded:\n%s", out)
			}
			table := wantCode(t, exitOK, "", append([]string{"jobs", "runs", "stuck"}, s.args...)...)
			note := fmt.Sprintf("token %d on %s: lock force-released by %s at ", l.Token, s.name, want)
			if !strings.Contains(table, note) || !strings.Contains(table, "force-released ") {
				t.Errorf("jobs runs (table) lacks the release %q and its flag:\n%s", note, table)
			}
			var runs []batontype.RunRecord
			if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "runs", "stuck", "-o", "json"}, s.args...)...)), &runs); err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].Token != l.Token || runs[0].ReleasedBy != want || runs[0].ReleasedAt.IsZero() {
				t.Errorf("jobs runs -o json: %+v, want token %d released by %s", runs, l.Token, want)
			}
			// Nothing held any more: nothing to release, nothing recorded.
			wantCode(t, exitNotFound, "", append([]string{"locks", "release", "--force", "--yes", "stuck"}, s.args...)...)
		})
	}
}
