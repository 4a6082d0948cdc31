package schedulertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// opsProviders returns n providers sharing one backend: fresh Redis keys
// or a fresh PostgreSQL schema.
func opsProviders(t testing.TB, backend string, n int) []lockprovider.Provider {
	t.Helper()
	var out []lockprovider.Provider
	switch backend {
	case "memory":
		p := newMemory(t, nil)
		for range n {
			out = append(out, p)
		}
	case "redis":
		c, prefix := redisenv.Client(t), testenv.Prefix(t)
		for range n {
			out = append(out, must(redisprovider.New(c, &redisprovider.Config{Prefix: prefix})))
		}
	case "postgres":
		pg := pgenv.Schema(t)
		for i := range n {
			p := must(pgprovider.New(pg.Pool, nil))
			if i == 0 {
				if err := p.Migrate(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, p)
		}
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	return out
}

// ranTick is what a job saw of one of its runs.
type ranTick struct {
	replica string
	token   int64
}

// TestLedgerThreeInstances runs three scheduler instances with the ledger
// on, with a succeeding, a failing, a panicking and a lock-losing job, and
// checks that the ledger has exactly one record per tick, with the replica
// and token of the run and the right outcome, and that the registry lists
// the instances while they run and none after.
func TestLedgerThreeInstances(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ledgerThreeInstances(t, backend)
		})
	}
}

func ledgerThreeInstances(t *testing.T, backend string) {
	const iv = 250 * time.Millisecond
	ps := opsProviders(t, backend, 3)
	var (
		mu  sync.Mutex
		ran = map[string]map[int64]ranTick{} // job -> tick ms -> run
	)
	note := func(job, replica string, run scheduler.Run) {
		mu.Lock()
		defer mu.Unlock()
		if ran[job] == nil {
			ran[job] = map[int64]ranTick{}
		}
		if _, dup := ran[job][run.Tick.UnixMilli()]; dup {
			t.Errorf("%s tick %v ran twice", job, run.Tick)
		}
		ran[job][run.Tick.UnixMilli()] = ranTick{replica, run.Token}
	}
	var scheds []*scheduler.Scheduler
	for i, p := range ps {
		name := fmt.Sprintf("%s-replica-%d", backend, i)
		s := newSched(t, p, &scheduler.Config{LockedBy: name, Ledger: true, Version: "test", RegistryTTL: 2 * time.Second})
		do := func(job string, opts []scheduler.LockOption, fn func(ctx context.Context) error) {
			_, err := s.Every(iv).Locked(job, opts...).Do(func(ctx context.Context, run scheduler.Run) error {
				note(job, name, run)
				return fn(ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		do("ok", []scheduler.LockOption{scheduler.AtMostFor(iv)}, func(context.Context) error { return nil })
		do("fail", []scheduler.LockOption{scheduler.AtMostFor(iv)}, func(context.Context) error { return errors.New("disk full") })
		do("boom", []scheduler.LockOption{scheduler.AtMostFor(iv)}, func(context.Context) error { panic("nil map") })
		do("lost", []scheduler.LockOption{scheduler.AtMostFor(100 * time.Millisecond)}, func(ctx context.Context) error {
			<-ctx.Done()
			return context.Cause(ctx)
		})
		scheds = append(scheds, s)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(8 * iv)
	reg := ps[0].(lockprovider.Registry)
	insts, err := reg.Instances(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 3 || len(insts[0].Jobs) != 4 || insts[0].Version != "test" {
		t.Errorf("registry while running: %+v, want 3 instances with 4 jobs each", insts)
	}
	for _, s := range scheds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		cancel()
	}
	if insts, err := reg.Instances(t.Context()); err != nil || len(insts) != 0 {
		t.Errorf("registry after Shutdown: %+v, %v; want empty", insts, err)
	}

	led := ps[0].(lockprovider.Ledger)
	want := map[string]batontype.Outcome{
		"ok": batontype.OutcomeSucceeded, "fail": batontype.OutcomeFailed,
		"boom": batontype.OutcomePanicked, "lost": batontype.OutcomeLockLost,
	}
	for job, outcome := range want {
		runs, err := led.Runs(t.Context(), batontype.RunQuery{Job: job})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		seen := ran[job]
		mu.Unlock()
		if len(seen) < 5 {
			t.Errorf("%s: only %d runs in %v", job, len(seen), 8*iv)
		}
		ticks := map[int64]bool{}
		unseen := 0
		for _, r := range runs {
			k := r.Tick.UnixMilli()
			if ticks[k] {
				t.Errorf("%s: two records for tick %v", job, r.Tick)
			}
			ticks[k] = true
			s, ok := seen[k]
			switch {
			case !ok && job == "lost":
				// Claimed, but the lease's trust window had passed before
				// the job could start: a lost lock, not a run.
				unseen++
			case !ok:
				t.Errorf("%s: record for tick %v that no job saw: %+v", job, r.Tick, r)
			case r.LockedBy != s.replica || r.Token != s.token:
				t.Errorf("%s tick %v: record says %s token %d, the run was %s token %d", job, r.Tick, r.LockedBy, r.Token, s.replica, s.token)
			}
			if r.Outcome != outcome || r.Finished.Before(r.Started) || r.Finished.IsZero() {
				t.Errorf("%s tick %v: outcome %q finished %v, want %q and finished", job, r.Tick, r.Outcome, r.Finished, outcome)
			}
			if outcome != batontype.OutcomeSucceeded && r.Error == "" {
				t.Errorf("%s tick %v: no error text", job, r.Tick)
			}
			if job == "lost" && !strings.HasPrefix(r.Error, "lock lost") {
				t.Errorf("lost: error %q does not start with the loss", r.Error)
			}
			if job == "boom" && !strings.Contains(r.Error, "nil map") {
				t.Errorf("boom: error %q does not carry the panic value", r.Error)
			}
		}
		if len(runs)-unseen != len(seen) {
			t.Errorf("%s: %d ledger records (%d not started) for %d runs", job, len(runs), unseen, len(seen))
		}
	}
	last, succ, err := led.LastRuns(t.Context(), "ok")
	if err != nil || last.Token == 0 || succ.Token != last.Token {
		t.Errorf("LastRuns(ok) = %+v, %+v, %v; want the last run as last success", last, succ, err)
	}
	if _, succ, _ := led.LastRuns(t.Context(), "fail"); succ.Token != 0 {
		t.Errorf("LastRuns(fail) reports a success: %+v", succ)
	}
}

// Check reports a missed tick, and nothing once the tick has run.
func TestCheckMissedTick(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			p := opsProviders(t, backend, 1)[0]
			ctx := t.Context()
			every := time.Hour
			now := time.Now().Add(-2 * every) // the ticks checked lie in the past
			inst := batontype.Instance{LockedBy: "app-1", Started: now.Add(-48 * time.Hour), Jobs: []batontype.JobSpec{
				{Name: "hourly", Schedule: "@every 1h0m0s", Locked: true, AtMostFor: time.Minute},
				{Name: "local", Schedule: "@every 1h0m0s"},
			}}
			opts := jobstate.CheckOptions{Grace: time.Minute, Now: now}
			if _, err := jobstate.Check(ctx, p, opts); !errors.Is(err, jobstate.ErrNoInstances) {
				t.Errorf("Check without instances: %v, want ErrNoInstances", err)
			}
			if err := p.(lockprovider.Registry).Register(ctx, inst, time.Minute); err != nil {
				t.Fatal(err)
			}
			due := now.Add(-time.Minute).Truncate(every)
			runTick := func(tick time.Time, out batontype.Outcome) {
				t.Helper()
				led := p.(lockprovider.Ledger)
				owner := lockprovider.NewOwner()
				l, err := led.AcquireRun(ctx, lockprovider.AcquireParams{Name: "hourly", Owner: owner, LockedBy: "app-1", AtMostFor: time.Minute, Tick: tick}, lockprovider.RunStart{})
				if err != nil {
					t.Fatal(err)
				}
				err = led.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: "hourly", Owner: owner}, lockprovider.RunEnd{
					Run: batontype.RunRecord{Job: "hourly", Token: l.Token, Tick: tick, LockedBy: "app-1", Started: l.GrantedAt}, Outcome: out, Error: "x"})
				if err != nil {
					t.Fatal(err)
				}
			}
			runTick(due.Add(-every), batontype.OutcomeSucceeded) // the job ran before
			rep, err := jobstate.Check(ctx, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) != 1 || rep.Problems[0].Kind != "missed" || !rep.Problems[0].Tick.Equal(due) || rep.OK() {
				t.Fatalf("Check after a missed tick: %+v, want tick %v missed", rep.Problems, due)
			}
			if !slices.Equal(rep.Checked, []string{"hourly"}) {
				t.Errorf("checked %v, want only the locked job", rep.Checked)
			}
			// With Since, every tick of the last 3 hours is checked.
			since := opts
			since.Since = due.Add(-3*every + time.Second)
			if rep, _ := jobstate.Check(ctx, p, since); len(rep.Problems) != 2 {
				t.Errorf("Check since 3h: %+v, want the due tick and the one before the last run", rep.Problems)
			}
			runTick(due, batontype.OutcomeFailed)
			rep, _ = jobstate.Check(ctx, p, opts)
			if len(rep.Problems) != 1 || rep.Problems[0].Kind != "failed" || rep.Problems[0].Run == nil {
				t.Errorf("Check after a failed run: %+v, want failed", rep.Problems)
			}
			next := due.Add(every)
			opts.Now = next.Add(2 * time.Minute)
			runTick(next, batontype.OutcomeSucceeded)
			rep, _ = jobstate.Check(ctx, p, opts)
			if !rep.OK() {
				t.Errorf("Check after the tick ran: %+v, want OK", rep.Problems)
			}
		})
	}
}

// A job registered without a ledger run before its instances started is
// not reported missed.
func TestCheckNewJob(t *testing.T) {
	p := newMemory(t, nil)
	now := time.Now()
	inst := batontype.Instance{LockedBy: "a", Started: now.Add(-10 * time.Minute), Jobs: []batontype.JobSpec{
		{Name: "daily", Schedule: "0 2 * * *", TimeZone: "UTC", Locked: true, AtMostFor: time.Minute},
	}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	rep, err := jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: now})
	if err != nil || !rep.OK() {
		t.Errorf("Check of a new job: %+v, %v; want OK", rep.Problems, err)
	}
}

// A job counts as existing from its oldest live instance's start or its
// oldest run, whichever is earlier: a new job run once by hand is not
// missed at the ticks before it was deployed, while a job with older runs
// is missed at every tick.
func TestCheckKnownSince(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			p := opsProviders(t, backend, 1)[0]
			ctx := t.Context()
			led := p.(lockprovider.Ledger)
			manualRun := func(job string) {
				t.Helper()
				owner := lockprovider.NewOwner()
				l, err := led.AcquireRun(ctx, lockprovider.AcquireParams{Name: job, Owner: owner, LockedBy: "app-1", AtMostFor: time.Minute}, lockprovider.RunStart{Manual: true})
				if err != nil {
					t.Fatal(err)
				}
				err = led.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: job, Owner: owner}, lockprovider.RunEnd{
					Run: batontype.RunRecord{Job: job, Token: l.Token, LockedBy: "app-1", Started: l.GrantedAt, Manual: true}, Outcome: batontype.OutcomeSucceeded})
				if err != nil {
					t.Fatal(err)
				}
			}
			spec := func(name string) batontype.JobSpec {
				return batontype.JobSpec{Name: name, Schedule: "@every 1h0m0s", Locked: true, AtMostFor: time.Minute}
			}
			// Deployed now and run once by hand: the hourly ticks of the
			// last three hours came before it existed.
			now := time.Now()
			inst := batontype.Instance{LockedBy: "app-1", Started: now, Jobs: []batontype.JobSpec{spec("fresh")}}
			if err := p.(lockprovider.Registry).Register(ctx, inst, time.Minute); err != nil {
				t.Fatal(err)
			}
			manualRun("fresh")
			opts := jobstate.CheckOptions{Now: time.Now(), Since: now.Add(-3 * time.Hour), Jobs: []string{"fresh"}}
			if rep, err := jobstate.Check(ctx, p, opts); err != nil || !rep.OK() {
				t.Errorf("Check of a new job run by hand: %+v, %v; want OK", rep.Problems, err)
			}
			// Checked later, over the ticks at hour+3h, +4h and +5h, with
			// its instance started after the first of them: the run before
			// the window shows the job existed, so all three ticks count.
			hour := now.Truncate(time.Hour)
			inst.Started = hour.Add(3*time.Hour + 30*time.Minute)
			if err := p.(lockprovider.Registry).Register(ctx, inst, time.Minute); err != nil {
				t.Fatal(err)
			}
			opts = jobstate.CheckOptions{Now: hour.Add(5*time.Hour + 30*time.Minute), Since: hour.Add(2*time.Hour + 30*time.Minute), Jobs: []string{"fresh"}}
			rep, err := jobstate.Check(ctx, p, opts)
			if err != nil || len(rep.Problems) != 3 {
				t.Errorf("Check of a job with an older run: %+v, %v; want 3 ticks missed", rep.Problems, err)
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	for _, c := range []struct {
		spec, tz string
		at, next string
	}{
		{"@every 1h0m0s", "", "2026-01-01T10:30:00Z", "2026-01-01T11:00:00Z"},
		{"@every 1h0m0s offset 5m0s", "", "2026-01-01T10:30:00Z", "2026-01-01T11:05:00Z"},
		{"0 2 * * *", "Europe/Paris", "2026-01-01T10:30:00Z", "2026-01-02T01:00:00Z"},
		{"CRON_TZ=UTC 0 2 * * *", "Europe/Paris", "2026-01-01T10:30:00Z", "2026-01-02T02:00:00Z"},
	} {
		s, err := jobstate.ParseSchedule(c.spec, c.tz)
		if err != nil {
			t.Errorf("ParseSchedule(%q, %q): %v", c.spec, c.tz, err)
			continue
		}
		at, _ := time.Parse(time.RFC3339, c.at)
		if got := s.Next(at).UTC().Format(time.RFC3339); got != c.next {
			t.Errorf("%q in %q: Next(%s) = %s, want %s", c.spec, c.tz, c.at, got, c.next)
		}
	}
	for _, bad := range []string{"", "@every 1h offset 2h", "@every x offset 1m", "61 * * * *"} {
		if _, err := jobstate.ParseSchedule(bad, ""); !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("ParseSchedule(%q): %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := jobstate.ParseSchedule("@hourly", "Mars/Base"); !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("unknown zone: %v, want ErrInvalid", err)
	}
}

// envOpsChild carries a killedSpec (JSON) to TestOpsHelperProcess.
const envOpsChild = "BATON_OPS_CHILD"

type killedSpec struct{ Backend, URL, Prefix string }

func killedProvider(ctx context.Context, spec killedSpec) (lockprovider.Provider, func(), error) {
	if spec.Backend == "redis" {
		opt, err := goredis.ParseURL(spec.URL)
		if err != nil {
			return nil, nil, err
		}
		opt.ContextTimeoutEnabled = true
		c := goredis.NewClient(opt)
		p, err := redisprovider.New(c, &redisprovider.Config{Prefix: spec.Prefix})
		return p, func() { _ = c.Close() }, err
	}
	pool, err := pgxpool.New(ctx, spec.URL)
	if err != nil {
		return nil, nil, err
	}
	p, err := pgprovider.New(pool, nil)
	return p, pool.Close, err
}

// TestOpsHelperProcess is the child of TestLedgerKilledReplica: a scheduler
// whose job never returns, until the parent kills the process.
func TestOpsHelperProcess(t *testing.T) {
	raw := os.Getenv(envOpsChild)
	if raw == "" {
		t.Skip("helper process for TestLedgerKilledReplica")
	}
	var spec killedSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	p, closeP, err := killedProvider(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer closeP()
	s := newSched(t, p, &scheduler.Config{LockedBy: "doomed", Ledger: true, RegistryTTL: time.Minute})
	if _, err := s.Every(200*time.Millisecond).Locked("stuck", scheduler.AtMostFor(500*time.Millisecond)).Do(
		func(context.Context, scheduler.Run) error { time.Sleep(time.Hour); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Println("READY")
	time.Sleep(time.Minute) // killed long before
}

// TestLedgerKilledReplica kills (SIGKILL) a process in the middle of a
// run: the ledger keeps the run as started and not finished, and Check
// reports it unfinished once its lease ran out.
func TestLedgerKilledReplica(t *testing.T) {
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			spec := killedSpec{Backend: backend}
			if backend == "redis" {
				spec.URL, spec.Prefix = testenv.RedisURL(t), testenv.Prefix(t)
			} else {
				pg := pgenv.Schema(t)
				spec.URL = pg.URL
				if err := must(pgprovider.New(pg.Pool, nil)).Migrate(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			p, closeP, err := killedProvider(t.Context(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer closeP()
			raw, _ := json.Marshal(spec)
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpsHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), envOpsChild+"="+string(raw))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			led := p.(lockprovider.Ledger)
			var run batontype.RunRecord
			for deadline := time.Now().Add(30 * time.Second); run.Token == 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the child recorded no run within 30s")
				}
				if run, _, err = led.LastRuns(t.Context(), "stuck"); err != nil {
					t.Fatal(err)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			last, _, err := led.LastRuns(t.Context(), "stuck")
			if err != nil {
				t.Fatal(err)
			}
			if last.Token != run.Token || last.LockedBy != "doomed" || last.Outcome != batontype.OutcomeRunning || !last.Finished.IsZero() {
				t.Fatalf("killed run reads %+v, want started by doomed, not finished", last)
			}
			time.Sleep(time.Until(last.Started.Add(600 * time.Millisecond))) // the lease ran out
			rep, err := jobstate.Check(t.Context(), p, jobstate.CheckOptions{Grace: time.Millisecond, Since: last.Tick.Add(-time.Millisecond), Jobs: []string{"stuck"}})
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, pr := range rep.Problems {
				if pr.Tick.Equal(last.Tick) {
					found = pr.Kind == "unfinished" && pr.Run != nil && pr.Run.LockedBy == "doomed"
				}
			}
			if !found {
				t.Errorf("Check does not report the killed run unfinished: %+v", rep.Problems)
			}
		})
	}
}

func TestOpsConfigValidation(t *testing.T) {
	p := newMemory(t, nil)
	for _, cfg := range []scheduler.Config{
		{RegistryTTL: time.Millisecond},
		{RegistryTTL: -time.Second},
		{LedgerRetention: batontype.Retention{MaxRuns: -1}},
		{LedgerRetention: batontype.Retention{MaxAge: time.Millisecond}},
		{Version: "v1\n"},
	} {
		if _, err := scheduler.New(p, &cfg); !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("New(%+v): %v, want ErrInvalid", cfg, err)
		}
	}
}

// Without Ledger, the provider's plain Acquire and Release are used and
// nothing is recorded; DisableRegistry publishes nothing.
func TestLedgerOffRegistryOff(t *testing.T) {
	p := newMemory(t, nil)
	s := newSched(t, p, &scheduler.Config{LockedBy: "quiet", DisableRegistry: true})
	ran := make(chan struct{}, 1)
	if _, err := s.Every(20*time.Millisecond).Locked("j", scheduler.AtMostFor(time.Second)).Do(func(context.Context, scheduler.Run) error {
		select {
		case ran <- struct{}{}:
		default:
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	<-ran
	if insts, _ := p.Instances(t.Context()); len(insts) != 0 {
		t.Errorf("DisableRegistry: registry holds %+v", insts)
	}
	if runs, _ := p.Runs(t.Context(), batontype.RunQuery{Job: "j"}); len(runs) != 0 {
		t.Errorf("ledger off: %d records", len(runs))
	}
}

// A run whose lock is force-released while it runs, and which returns
// before it learns of it (no renewal, no extension), learns it from its
// release: it counts as a lost lock (Stats, the LockLost hook) and the
// ledger records it as lock_lost, not as the success its function
// returned, with who force-released it.
func TestForceReleasedRunIsLockLost(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			p := opsProviders(t, backend, 1)[0]
			var lostErr atomic.Value
			s := newSched(t, p, &scheduler.Config{LockedBy: "app-1", Ledger: true,
				Observer: scheduler.Hooks{LockLost: func(ev scheduler.Event) { lostErr.Store(ev.Err) }}})
			started, finish := make(chan int64, 1), make(chan struct{})
			var first sync.Once
			job, err := s.Every(300*time.Millisecond).Locked("nightly", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
				first.Do(func() {
					started <- run.Token
					<-finish
				})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			var token int64
			select {
			case token = <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not start")
			}
			if _, err := p.(lockprovider.Admin).ForceRelease(t.Context(), lockprovider.ForceReleaseParams{Name: "nightly", Token: token, By: "cli:ops@host"}); err != nil {
				t.Fatal(err)
			}
			close(finish)
			led := p.(lockprovider.Ledger)
			deadline := time.Now().Add(10 * time.Second)
			var run batontype.RunRecord
			for {
				runs, err := led.Runs(t.Context(), batontype.RunQuery{Job: "nightly"})
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(runs, func(r batontype.RunRecord) bool { return r.Token == token })
				if i >= 0 && runs[i].Outcome == batontype.OutcomeLockLost {
					run = runs[i]
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("ledger: %+v; want the run of token %d, lock_lost", runs, token)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if run.Token != token || run.Finished.IsZero() || run.Error == "" || run.ReleasedBy != "cli:ops@host" || run.ReleasedAt.IsZero() {
				t.Errorf("record %+v: want token %d, finished, an error text, released by cli:ops@host", run, token)
			}
			if err := s.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			if st := job.Stats(); st.LockLost != 1 {
				t.Errorf("Stats %+v; want one lost lock", st)
			}
			if err, _ := lostErr.Load().(error); !errors.Is(err, batontype.ErrLockLost) {
				t.Errorf("LockLost hook saw %v; want an error matching ErrLockLost", err)
			}
		})
	}
}
