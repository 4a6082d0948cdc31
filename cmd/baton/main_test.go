package main_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var binary string

// Every test runs in parallel with the others: each works on a Redis key
// prefix, PostgreSQL schema or MySQL database of its own, and runs the CLI
// as a process of its own.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "baton-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "baton")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	defer os.RemoveAll(dir)
	testenv.Main(m)
}

// baton runs the built binary with args and stdin, and returns its
// stdout, stderr and exit code.
func baton(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_MYSQL_URL=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("baton %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func wantCode(t *testing.T, want int, stdin string, args ...string) string {
	t.Helper()
	out, errs, code := baton(t, stdin, args...)
	if code != want {
		t.Fatalf("baton %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errs)
	}
	return out
}

var (
	timeRE  = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)
	tokenRE = regexp.MustCompile(`"token": \d+`)
	durRE   = regexp.MustCompile(`"(duration|reset_after)": "[^"]*"`)
	msRE    = regexp.MustCompile(`"(duration_ms|reset_after_ms)": \d+`)
	offRE   = regexp.MustCompile(` offset [0-9hms.]+`)
)

// normalize replaces the values that change from run to run.
func normalize(s string) string {
	s = timeRE.ReplaceAllString(s, `"<time>"`)
	s = tokenRE.ReplaceAllString(s, `"token": "<token>"`)
	s = offRE.ReplaceAllString(s, " offset <offset>")
	s = msRE.ReplaceAllString(s, `"$1": "<ms>"`)
	return durRE.ReplaceAllString(s, `"$1": "<duration>"`)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	got = normalize(got)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: output differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// seed puts a held lock, a registered job with its ledger and a limited
// rate-limit key in p. The job runs daily at 12h before now, so its due
// tick is far from any boundary; its previous tick succeeded and the due
// one has no run. It returns that due tick.
func seed(t *testing.T, p lockprovider.Provider) time.Time {
	t.Helper()
	ctx := t.Context()
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "report", Owner: lockprovider.NewOwner(), LockedBy: "host-a:1", AtMostFor: time.Hour, AtLeastFor: 30 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	due := now.Add(-12 * time.Hour).Truncate(time.Second)
	offset := time.Duration(due.UnixNano() % int64(24*time.Hour))
	inst := batontype.Instance{LockedBy: "app-1", Version: "v1", Started: now.Add(-72 * time.Hour), Jobs: []batontype.JobSpec{
		{Name: "nightly", Schedule: "@every 24h0m0s offset " + offset.String(), Locked: true, AtMostFor: time.Hour, AtLeastFor: time.Minute},
	}}
	if err := p.(lockprovider.Registry).Register(ctx, inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	ran(t, p, due.Add(-24*time.Hour), batontype.OutcomeSucceeded, "")
	rl := p.(lockprovider.RateLimiter)
	if _, err := rl.RateLimit(ctx, lockprovider.RateRequest{Key: "user:42", N: 2, Limits: []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 2, Period: time.Hour}}}); err != nil {
		t.Fatal(err)
	}
	return due
}

// ran records a run of the nightly job for tick.
func ran(t *testing.T, p lockprovider.Provider, tick time.Time, out batontype.Outcome, msg string) {
	t.Helper()
	led := p.(lockprovider.Ledger)
	owner := lockprovider.NewOwner()
	l, err := led.AcquireRun(t.Context(), lockprovider.AcquireParams{Name: "nightly", Owner: owner, LockedBy: "app-1", AtMostFor: time.Hour, Tick: tick}, lockprovider.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	err = led.ReleaseRun(t.Context(), lockprovider.ReleaseParams{Name: "nightly", Owner: owner}, lockprovider.RunEnd{
		Run: batontype.RunRecord{Job: "nightly", Token: l.Token, Tick: tick, LockedBy: "app-1", Started: l.GrantedAt}, Outcome: out, Error: msg})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	backends := cliBackends(t)
	rp, redisArgs := backends[0].p, backends[0].args
	pp, pgArgs := backends[1].p, backends[1].args
	for _, s := range backends {
		t.Run(s.name, func(t *testing.T) {
			due := seed(t, s.p)
			run := func(code int, stdin string, args ...string) string {
				t.Helper()
				return wantCode(t, code, stdin, append(append([]string{}, args...), s.args...)...)
			}
			// Who holds lock X and until when?
			golden(t, "locks_ls", strings.ReplaceAll(run(0, "", "locks", "ls", "-o", "json"), s.name, "BACKEND"))
			out := run(0, "", "locks", "get", "report")
			if !strings.Contains(out, "host-a:1") || !strings.Contains(out, "report") || !strings.Contains(out, "AT LEAST") {
				t.Errorf("locks get (table):\n%s", out)
			}
			run(exitNotFound, "", "locks", "get", "nothing")
			// A stuck lock: release refuses without --force, asks, and
			// frees exactly the confirmed lease.
			run(exitUsage, "", "locks", "release", "report")
			run(exitAborted, "n\n", "locks", "release", "--force", "report")
			if _, errs, _ := baton(t, "n\n", append([]string{"locks", "release", "--force", "report"}, s.args...)...); !strings.Contains(errs, "minimum hold") {
				t.Errorf("the question does not show the lease's minimum hold:\n%s", errs)
			}
			if info, _ := s.p.(lockprovider.Inspector).Inspect(t.Context(), "report"); !info.Held {
				t.Fatal("lock freed although the operator said no")
			}
			out = run(0, "y\n", "locks", "release", "--force", "report")
			if !strings.Contains(out, "host-a:1") || !strings.Contains(out, "token") {
				t.Errorf("release output does not show holder and token:\n%s", out)
			}
			if info, _ := s.p.(lockprovider.Inspector).Inspect(t.Context(), "report"); info.Held {
				t.Error("lock still held after locks release --force")
			}
			run(exitNotFound, "", "locks", "release", "--force", "--yes", "report")
			// A free lock's record is shown, and the exit code says it is
			// not held.
			if out := run(exitNotFound, "", "locks", "get", "report"); !strings.Contains(out, "report") {
				t.Errorf("locks get of a free lock shows no row:\n%s", out)
			}
			// An operator who takes longer than --timeout to answer still
			// releases: the timeout bounds the backend calls.
			if _, err := s.p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "slow-answer", Owner: lockprovider.NewOwner(), LockedBy: "host-b:2", AtMostFor: time.Hour}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, append([]string{"locks", "release", "--force", "slow-answer", "--timeout", "1s"}, s.args...)...)
			cmd.Env = append(os.Environ(), "BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_MYSQL_URL=")
			pr, pw := io.Pipe()
			cmd.Stdin = pr
			go func() {
				time.Sleep(1500 * time.Millisecond) // past --timeout
				_, _ = pw.Write([]byte("y\n"))
				_ = pw.Close()
			}()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("release answered after --timeout: %v\n%s", err, out)
			}

			// Did the nightly job run, where, how long, with what result?
			golden(t, "jobs_ls", strings.ReplaceAll(run(0, "", "jobs", "ls", "-o", "json"), s.name, "BACKEND"))
			golden(t, "jobs_runs", strings.ReplaceAll(run(0, "", "jobs", "runs", "nightly", "-o", "json"), s.name, "BACKEND"))
			// The seeded run started moments ago (backend clock).
			if out := run(0, "", "jobs", "runs", "nightly", "--since", "1h"); !strings.Contains(out, "succeeded") {
				t.Errorf("jobs runs --since 1h misses the run:\n%s", out)
			}
			future := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
			if out := run(0, "", "jobs", "runs", "nightly", "--since", future); strings.Contains(out, "succeeded") {
				t.Errorf("jobs runs --since %s lists an older run:\n%s", future, out)
			}
			run(exitUsage, "", "jobs", "runs", "nightly", "--since", "yesterday")
			if _, errs, code := baton(t, "", append([]string{"jobs", "runs", "nightly", "--limit", "1"}, s.args...)...); code != 0 || !strings.Contains(errs, "newest 1 runs only") {
				t.Errorf("jobs runs --limit 1 with more runs: exit %d, stderr %q; want a note that there may be more", code, errs)
			}
			// The dead-man's switch: the due tick was missed.
			out = run(exitProblem, "", "jobs", "check")
			if !strings.Contains(out, "nightly") || !strings.Contains(out, "missed") {
				t.Errorf("jobs check output:\n%s", out)
			}
			golden(t, "jobs_check_missed", strings.ReplaceAll(run(exitProblem, "", "jobs", "check", "-o", "json"), s.name, "BACKEND"))
			ran(t, s.p, due, batontype.OutcomeFailed, "exit status 1")
			if out := run(0, "", "jobs", "runs", "nightly", "--outcome", "failed,panicked"); !strings.Contains(out, "failed") || strings.Contains(out, "succeeded") {
				t.Errorf("jobs runs --outcome failed,panicked:\n%s", out)
			}
			if out := run(0, "", "jobs", "runs", "nightly", "--outcome", "succeeded"); strings.Contains(out, "exit status 1") || !strings.Contains(out, "succeeded") {
				t.Errorf("jobs runs --outcome succeeded:\n%s", out)
			}
			run(exitUsage, "", "jobs", "runs", "nightly", "--outcome", "broken")
			// A job not found says where it was looked for: a wrong prefix
			// or schema looks the same as a missing job.
			if _, errs, code := baton(t, "", append([]string{"jobs", "runs", "no-such-job"}, s.args...)...); code != exitNotFound || !strings.Contains(errs, "looked in "+s.name+": ") {
				t.Errorf("jobs runs no-such-job: exit %d, stderr %q; want 3 and where it looked", code, errs)
			}
			out = run(exitProblem, "", "jobs", "check")
			if !strings.Contains(out, "failed") || !strings.Contains(out, "exit status 1") {
				t.Errorf("jobs check after a failed run:\n%s", out)
			}
			ran(t, s.p, due.Add(time.Second), batontype.OutcomeSucceeded, "") // a retry recorded under a later tick does not hide the failure
			run(exitProblem, "", "jobs", "check")
			run(0, "", "jobs", "check", "--grace", "13h") // nothing due yet with that grace
			// A job that no live instance has (misspelt, or all its
			// replicas gone) is not healthy, and has no runs to list.
			run(exitNotFound, "", "jobs", "check", "--grace", "13h", "nightyl")
			run(exitNotFound, "", "jobs", "runs", "nightyl")

			// Rate limits.
			golden(t, "limits_ls", strings.ReplaceAll(run(0, "", "limits", "ls", "-o", "json"), s.name, "BACKEND"))
			golden(t, "limits_get_peek", strings.ReplaceAll(run(0, "", "limits", "get", "user:42", "--limit", "fixed_window:2/1h", "-o", "json"), s.name, "BACKEND"))
			// Keys near or over the application's limit: the seeded key
			// used both units, so it is over 2/1h and ok under 100/1h.
			golden(t, "limits_ls_near", strings.ReplaceAll(run(0, "", "limits", "ls", "--limit", "fixed_window:2/1h", "--near", "-o", "json"), s.name, "BACKEND"))
			if out := run(0, "", "limits", "ls", "--limit", "fixed_window:100/1h", "--near", "-o", "json"); strings.TrimSpace(out) != "[]" {
				t.Errorf("limits ls --near with a limit the key is far from:\n%s", out)
			}
			if out := run(0, "", "limits", "ls", "--limit", "fixed_window:100/1h"); !strings.Contains(out, "STATE") || !strings.Contains(out, " ok") {
				t.Errorf("limits ls --limit (table) without the key's state:\n%s", out)
			}
			run(exitUsage, "", "limits", "ls", "--near") // the backend stores no limits
			run(0, "", "limits", "reset", "user:42")
			run(exitNotFound, "", "limits", "get", "user:42")
			// A key without state (reset, or misspelt) resets nothing.
			run(exitNotFound, "", "limits", "reset", "user:42")
			run(exitNotFound, "", "limits", "reset", "usr:42")
			out = run(0, "", "limits", "get", "user:42", "--limit", "fixed_window:2/1h")
			if !strings.Contains(out, " 2 ") {
				t.Errorf("remaining after reset:\n%s", out)
			}
			run(exitUsage, "", "limits", "get", "user:42", "--limit", "leaky:2/1h")
			run(exitUsage, "", "limits", "get", "") // not every key

			// A long error text is cut for the table between runes.
			ran(t, s.p, due.Add(2*time.Second), batontype.OutcomeFailed, strings.Repeat("é", 40))
			if out := run(0, "", "jobs", "runs", "nightly"); !utf8.ValidString(out) || !strings.Contains(out, "é...") {
				t.Errorf("jobs runs with a long non-ASCII error:\n%s", out)
			}
			run(exitUsage, "", "jobs", "check", "")
		})
	}
	t.Run("both", func(t *testing.T) {
		if _, err := rp.Acquire(t.Context(), lockprovider.AcquireParams{Name: "on-redis", Owner: lockprovider.NewOwner(), LockedBy: "r", AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
		pgOwner := lockprovider.NewOwner()
		if _, err := pp.Acquire(t.Context(), lockprovider.AcquireParams{Name: "on-postgres", Owner: pgOwner, LockedBy: "p", AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if _, err := rp.Acquire(t.Context(), lockprovider.AcquireParams{Name: "a-on-redis", Owner: lockprovider.NewOwner(), LockedBy: "r", AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
		out := wantCode(t, 0, "", append(append([]string{"locks", "ls"}, redisArgs...), pgArgs...)...)
		if !strings.Contains(out, "on-redis") || !strings.Contains(out, "on-postgres") ||
			!strings.Contains(out, "redis") || !strings.Contains(out, "postgres") {
			t.Errorf("locks ls with both backends:\n%s", out)
		}
		if a, b := strings.Index(out, "a-on-redis"), strings.Index(out, "\non-redis"); a < 0 || b < 0 || a > b {
			t.Errorf("locks ls not sorted by name:\n%s", out)
		}
		// A lease renewed without AtLeastFor has no minimum hold to show
		// (its stored bound is the renewal's time, already past).
		if _, err := pp.Extend(t.Context(), lockprovider.ExtendParams{Name: "on-postgres", Owner: pgOwner, AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
		out = wantCode(t, 0, "", append([]string{"locks", "get", "on-postgres"}, pgArgs...)...)
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 {
			t.Errorf("locks get on-postgres:\n%s", out)
		} else if cols := regexp.MustCompile(`\s{2,}`).Split(lines[1], -1); len(cols) != 9 || cols[7] != "-" {
			t.Errorf("locks get shows an at-least bound for a lease without one:\n%s", out)
		}
		// A rate-limit key lives on one backend: reset says where, and
		// only there.
		if _, err := pp.(lockprovider.RateLimiter).RateLimit(t.Context(), lockprovider.RateRequest{Key: "only-on-postgres", N: 1, Limits: []batontype.RateLimit{
			{Algorithm: batontype.FixedWindow, Rate: 2, Period: time.Hour}}}); err != nil {
			t.Fatal(err)
		}
		out = wantCode(t, 0, "", append(append([]string{"limits", "reset", "only-on-postgres"}, redisArgs...), pgArgs...)...)
		if out != "reset \"only-on-postgres\" on postgres\n" {
			t.Errorf("limits reset of a key on postgres only:\n%s", out)
		}
	})
	t.Run("usage", func(t *testing.T) {
		wantCode(t, exitUsage, "", "locks", "ls")       // no backend
		wantCode(t, exitUsage, "", "frobnicate", "now") // unknown command
		wantCode(t, exitUsage, "", append([]string{"locks", "ls", "-o", "yaml"}, redisArgs...)...)
		wantCode(t, exitOK, "", "help")
		wantCode(t, exitBackend, "", "locks", "ls", "--redis", "redis://127.0.0.1:1/0", "--timeout", "2s")
		// Only baton's own message, not go-redis's log of each dial.
		if _, errs, _ := baton(t, "", "locks", "ls", "--redis", "redis://127.0.0.1:1/0", "--timeout", "2s"); strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("unreachable Redis: stderr has more than baton's one line:\n%s", errs)
		}
	})
	t.Run("help", func(t *testing.T) {
		// Help asked for goes to stdout with exit 0, for every command
		// and group; it never prints the URLs of the environment, which
		// may hold passwords.
		for _, args := range [][]string{{"--help"}, {"-h"}, {"locks", "--help"}, {"locks", "get", "--help"},
			{"locks", "release", "-h"}, {"jobs", "check", "--help"}, {"limits", "reset", "--help"}} {
			cmd := exec.Command(binary, args...)
			cmd.Env = append(os.Environ(), "BATON_REDIS_URL=redis://:s3cret@127.0.0.1:1/0", "BATON_POSTGRES_URL=postgres://u:s3cret@127.0.0.1:1/db")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Errorf("baton %v: %v\n%s", args, err, errb.String())
			}
			if !strings.Contains(out.String(), "Usage: baton") || errb.Len() != 0 {
				t.Errorf("baton %v: help not on stdout\nstdout: %s\nstderr: %s", args, out.String(), errb.String())
			}
			if strings.Contains(out.String()+errb.String(), "s3cret") {
				t.Errorf("baton %v prints the password of a URL:\n%s", args, out.String())
			}
		}
		// A usage error still goes to stderr.
		if out, errs, code := baton(t, "", "locks", "get", "--bogus"); code != exitUsage || out != "" || !strings.Contains(errs, "Usage: baton locks get") {
			t.Errorf("usage error: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
	})
}

// Exit codes, as documented.
const (
	exitProblem  = 1
	exitUsage    = 2
	exitNotFound = 3
	exitBackend  = 4
	exitAborted  = 5
	exitOK       = 0
)
