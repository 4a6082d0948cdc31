package schedulertest

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler"
)

var noop = func(context.Context, scheduler.Run) error { return nil }

func start(t *testing.T, s *scheduler.Scheduler) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// A locked job runs once per tick across replicas, including replicas
// whose clocks lag, and each run gets a newer fencing token.
func TestLockedRunsOncePerTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		var mu sync.Mutex
		byTick := map[time.Time][]int{}
		var tokens []int64
		offsets := []time.Duration{0, -10 * time.Second, -20 * time.Second, 5 * time.Second}
		time.Sleep(30 * time.Second) // off the tick, so lagging clocks do not see tick 00:00 as due
		var recs []*recorder
		for i, off := range offsets {
			rec := &recorder{}
			recs = append(recs, rec)
			s := newSched(t, p, &scheduler.Config{Now: offsetClock(off), Observer: rec.hooks()})
			must(s.Every(time.Minute).Locked("report", scheduler.AtMostFor(50*time.Second)).Do(
				func(ctx context.Context, run scheduler.Run) error {
					time.Sleep(time.Duration(i+1) * time.Second)
					mu.Lock()
					defer mu.Unlock()
					byTick[run.Tick] = append(byTick[run.Tick], i)
					tokens = append(tokens, run.Token)
					return nil
				}))
			start(t, s)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if len(byTick) != 10 {
			t.Errorf("%d ticks ran, want 10", len(byTick))
		}
		for tick, who := range byTick {
			if len(who) != 1 {
				t.Errorf("tick %v ran on instances %v", tick, who)
			}
		}
		for i := 1; i < len(tokens); i++ {
			if tokens[i] <= tokens[i-1] {
				t.Errorf("tokens not increasing: %v", tokens)
			}
		}
		var skips int
		for _, r := range recs {
			skips += len(r.get("skipped"))
		}
		if skips != 30 {
			t.Errorf("%d skips, want 30 (3 losers x 10 ticks)", skips)
		}
	})
}

// A job without Locked runs on every instance at every tick.
func TestUnlockedRunsEverywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		var runs [3]atomic.Int32
		for i := range runs {
			s := newSched(t, p, nil)
			must(s.Every(time.Minute).Name("local-cache-refresh").Do(func(ctx context.Context, run scheduler.Run) error {
				if run.Token != 0 {
					t.Errorf("unlocked run has token %d", run.Token)
				}
				if err := run.Extend(ctx, time.Second); !errors.Is(err, scheduler.ErrNotLocked) {
					t.Errorf("Extend on unlocked job: %v, want ErrNotLocked", err)
				}
				runs[i].Add(1)
				return nil
			}))
			start(t, s)
		}
		time.Sleep(5*time.Minute + time.Second)
		synctest.Wait()
		for i := range runs {
			if n := runs[i].Load(); n != 5 {
				t.Errorf("instance %d ran %d times, want 5", i, n)
			}
		}
	})
}

// With AtLeastFor, a replica that tries right after a short run finds
// the lock still held (ErrNotAcquired); without it the lock is free and
// only tick identity stops it (ErrStaleTick).
func TestAtLeastForSkipsLateReplica(t *testing.T) {
	for _, c := range []struct {
		atLeast time.Duration
		want    error
	}{{30 * time.Second, scheduler.ErrNotAcquired}, {0, scheduler.ErrStaleTick}} {
		t.Run(c.want.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newMemory(t, nil)
				time.Sleep(30 * time.Second)
				var ran atomic.Int32
				job := func(context.Context, scheduler.Run) error { ran.Add(1); time.Sleep(time.Second); return nil }
				onTime := newSched(t, p, nil)
				rec := &recorder{}
				late := newSched(t, p, &scheduler.Config{Now: offsetClock(-5 * time.Second), Observer: rec.hooks()})
				for _, s := range []*scheduler.Scheduler{onTime, late} {
					must(s.Every(time.Minute).Locked("short", scheduler.AtMostFor(50*time.Second), scheduler.AtLeastFor(c.atLeast)).Do(job))
					start(t, s)
				}
				time.Sleep(40 * time.Second)
				synctest.Wait()
				if ran.Load() != 1 {
					t.Errorf("ran %d times, want 1", ran.Load())
				}
				sk := rec.get("skipped")
				if len(sk) != 1 || !errors.Is(sk[0].Err, c.want) {
					t.Fatalf("late replica skips = %+v, want one with %v", sk, c.want)
				}
			})
		})
	}
}

// A run outliving AtMostFor has its context cancelled with cause
// ErrLockLost when the trust window ends.
func TestLockLostCancelsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Observer: rec.hooks()})
		var cause error
		var ranFor time.Duration
		job := must(s.Every(time.Minute).Locked("slow", scheduler.AtMostFor(10*time.Second)).Do(
			func(ctx context.Context, run scheduler.Run) error {
				t0 := time.Now()
				<-ctx.Done()
				ranFor, cause = time.Since(t0), context.Cause(ctx)
				return ctx.Err()
			}))
		start(t, s)
		time.Sleep(time.Minute + 15*time.Second)
		synctest.Wait()
		if !errors.Is(cause, scheduler.ErrLockLost) {
			t.Errorf("cause = %v, want ErrLockLost", cause)
		}
		// The trust window ends a safety margin (1% plus 20ms) before
		// the lease does, so that a late timer still cancels the job
		// before another replica can be granted the lease.
		if ranFor != 10*time.Second-120*time.Millisecond {
			t.Errorf("cancelled after %v, want 9.88s (AtMostFor minus the margin)", ranFor)
		}
		if n := len(rec.get("lost")); n != 1 {
			t.Errorf("%d LockLost hooks, want 1", n)
		}
		if st := job.Stats(); st.LockLost != 1 || st.Failures != 1 || st.Runs != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// The ledger records a run that lost its lock as lock_lost with the loss
// as its cause, and what the job returned after it: a job that returns
// its ended context's error is not recorded as "context canceled".
func TestLockLostRecordsTheLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		s := newSched(t, p, &scheduler.Config{Ledger: true})
		must(s.Every(time.Minute).Locked("slow", scheduler.AtMostFor(10*time.Second)).Do(
			func(ctx context.Context, run scheduler.Run) error {
				<-ctx.Done()
				return ctx.Err()
			}))
		start(t, s)
		time.Sleep(time.Minute + 15*time.Second)
		synctest.Wait()
		runs, err := p.Runs(t.Context(), batontype.RunQuery{Job: "slow"})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Outcome != batontype.OutcomeLockLost || !strings.HasPrefix(runs[0].Error, "lock lost") ||
			!strings.HasSuffix(runs[0].Error, "; the job returned: context canceled") {
			t.Errorf("ledger: %+v, want one lock_lost run whose error starts with the loss and ends with the job's error", runs)
		}
	})
}

// The trust window is counted from when the acquire was sent: a slow
// acquire round trip shortens it.
func TestTrustWindowCountsFromSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, nil)
		p := &faulty{Provider: mem}
		p.acquire = func(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error, bool) {
			time.Sleep(3 * time.Second) // a slow network before the server grants
			l, err := mem.Acquire(ctx, ap)
			return l, err, true
		}
		s := newSched(t, p, nil)
		var ranFor time.Duration
		must(s.Every(time.Minute).Locked("slow-net", scheduler.AtMostFor(10*time.Second)).Do(
			func(ctx context.Context, run scheduler.Run) error {
				t0 := time.Now()
				<-ctx.Done()
				ranFor = time.Since(t0)
				return nil
			}))
		start(t, s)
		time.Sleep(time.Minute + 15*time.Second)
		synctest.Wait()
		if ranFor != 7*time.Second-120*time.Millisecond {
			t.Errorf("job ran %v before cancellation, want 6.88s (10s lease minus 3s round trip, minus the margin)", ranFor)
		}
	})
}

// AutoRenew lets a run outlast AtMostFor and keeps others out.
func TestAutoRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		var runs atomic.Int32
		var errs []error
		job := func(ctx context.Context, run scheduler.Run) error {
			runs.Add(1)
			select {
			case <-time.After(100 * time.Second):
			case <-ctx.Done():
				errs = append(errs, context.Cause(ctx))
			}
			return nil
		}
		for range 2 {
			s := newSched(t, p, nil)
			must(s.Every(time.Minute).Locked("long", scheduler.AtMostFor(9*time.Second), scheduler.AutoRenew()).Do(job))
			start(t, s)
		}
		// Tick at 1m runs until 2m40s, covering tick 2m, which the other
		// instance must not get; tick 3m runs again.
		time.Sleep(3*time.Minute + 10*time.Second)
		synctest.Wait()
		info, err := p.Inspect(context.Background(), "long")
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != 0 {
			t.Errorf("job context cancelled: %v", errs)
		}
		if n := runs.Load(); n != 2 {
			t.Errorf("%d runs, want 2 (ticks 1m and 3m; 2m was held)", n)
		}
		if !info.Held {
			t.Errorf("lease not held 10s into the second long run: %+v", info)
		}
	})
}

// A failed keep-alive extension that finds the lease gone cancels the job.
func TestAutoRenewFailureCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &faulty{Provider: newMemory(t, nil)}
		p.extend = func(context.Context, lockprovider.ExtendParams) (batontype.Lease, error, bool) {
			return batontype.Lease{}, batontype.ErrNotHeld, true
		}
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{Observer: rec.hooks()})
		var cause error
		var ranFor time.Duration
		must(s.Every(time.Minute).Locked("ka", scheduler.AtMostFor(9*time.Second), scheduler.AutoRenew()).Do(
			func(ctx context.Context, run scheduler.Run) error {
				t0 := time.Now()
				<-ctx.Done()
				ranFor, cause = time.Since(t0), context.Cause(ctx)
				return nil
			}))
		start(t, s)
		time.Sleep(time.Minute + 15*time.Second)
		synctest.Wait()
		if !errors.Is(cause, scheduler.ErrLockLost) || ranFor != 3*time.Second {
			t.Errorf("cancelled after %v with %v, want 3s (first extension) and ErrLockLost", ranFor, cause)
		}
		lost := rec.get("lost")
		if len(lost) != 1 || !errors.Is(lost[0].Err, batontype.ErrNotHeld) {
			t.Errorf("LockLost hooks = %+v", lost)
		}
	})
}

// Run.Extend moves the trust window.
func TestRunExtend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		s := newSched(t, p, nil)
		var cause error
		var ranFor time.Duration
		must(s.Every(time.Minute).Locked("ext", scheduler.AtMostFor(10*time.Second), scheduler.AtLeastFor(5*time.Second)).Do(
			func(ctx context.Context, run scheduler.Run) error {
				t0 := time.Now()
				time.Sleep(8 * time.Second)
				if err := run.Extend(ctx, 20*time.Second); err != nil {
					t.Errorf("Extend: %v", err)
				}
				if err := run.Extend(ctx, 0); !errors.Is(err, scheduler.ErrInvalidDuration) {
					t.Errorf("Extend(0) = %v, want ErrInvalidDuration", err)
				}
				<-ctx.Done()
				ranFor, cause = time.Since(t0), context.Cause(ctx)
				return nil
			}))
		start(t, s)
		time.Sleep(time.Minute + 40*time.Second)
		synctest.Wait()
		// The extension's window ends its margin (1% plus 20ms) early too.
		if ranFor != 28*time.Second-220*time.Millisecond || !errors.Is(cause, scheduler.ErrLockLost) {
			t.Errorf("ran %v, cause %v; want 27.78s (8s + 20s extension - margin), ErrLockLost", ranFor, cause)
		}
	})
}

// A panic is reported as a failure and the lock is still released.
func TestPanicRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{Observer: rec.hooks()})
		job := must(s.Every(time.Minute).Locked("boom", scheduler.AtMostFor(50*time.Second)).Do(
			func(context.Context, scheduler.Run) error { panic("kaboom") }))
		start(t, s)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		failed := rec.get("failed")
		var pe *scheduler.PanicError
		if len(failed) != 1 || !errors.As(failed[0].Err, &pe) || pe.Value != "kaboom" || len(pe.Stack) == 0 {
			t.Fatalf("Failed hooks = %+v, want one *PanicError", failed)
		}
		info := must(p.Inspect(context.Background(), "boom"))
		if info.Held {
			t.Errorf("lock still held after the panic: %+v", info)
		}
		if st := job.Stats(); st.Failures != 1 || st.Runs != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// Hooks see attempt, started, succeeded (and the winner's token) in order.
func TestHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Observer: rec.hooks()})
		must(s.Every(time.Minute).Locked("ok", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error {
			time.Sleep(2 * time.Second)
			return nil
		}))
		must(s.Every(time.Minute).Locked("err", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error {
			return errors.New("no data")
		}))
		// A hook that panics must not break anything.
		start(t, s)
		time.Sleep(time.Minute + 5*time.Second)
		synctest.Wait()
		tick := time.Date(2000, 1, 1, 0, 1, 0, 0, time.UTC)
		if a := rec.get("attempt"); len(a) != 2 || !a[0].Tick.Equal(tick) {
			t.Errorf("attempt = %+v", a)
		}
		if st := rec.get("started"); len(st) != 2 || st[0].Token == 0 {
			t.Errorf("started = %+v", st)
		}
		sc := rec.get("succeeded")
		if len(sc) != 1 || sc[0].Job != "ok" || sc[0].Duration != 2*time.Second || sc[0].Token == 0 {
			t.Errorf("succeeded = %+v", sc)
		}
		if f := rec.get("failed"); len(f) != 1 || f[0].Job != "err" || f[0].Err == nil || f[0].Err.Error() != "no data" {
			t.Errorf("failed = %+v", f)
		}
	})
}

func TestHookPanicContained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ran atomic.Bool
		var logged strings.Builder
		log := slog.New(slog.NewTextHandler(&logged, nil))
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Observer: scheduler.Hooks{Started: func(scheduler.Event) { panic("bad hook") }, Logger: log}})
		must(s.Every(time.Minute).Locked("x", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error {
			ran.Store(true)
			return nil
		}))
		start(t, s)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if !ran.Load() {
			t.Error("job did not run after a hook panicked")
		}
		if !strings.Contains(logged.String(), "hook panicked") || !strings.Contains(logged.String(), "bad hook") {
			t.Errorf("Hooks.Logger got %q, want the hook's panic", logged.String())
		}
	})
}

// An acquire with an unknown outcome is a failure and the job does not run.
func TestAcquireUnknownOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("connection reset")
		p := &faulty{Provider: newMemory(t, nil)}
		p.acquire = func(context.Context, lockprovider.AcquireParams) (batontype.Lease, error, bool) {
			return batontype.Lease{}, boom, true
		}
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{Observer: rec.hooks()})
		job := must(s.Every(time.Minute).Locked("x", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error {
			t.Error("job ran after an acquire error")
			return nil
		}))
		start(t, s)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if f := rec.get("failed"); len(f) != 1 || !errors.Is(f[0].Err, boom) {
			t.Errorf("failed = %+v", f)
		}
		if st := job.Stats(); st.Failures != 1 || st.Runs != 0 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// Jobs due at the same tick are claimed concurrently, not one round trip
// after another.
func TestConcurrentClaims(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, nil)
		p := &faulty{Provider: mem}
		p.acquire = func(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error, bool) {
			time.Sleep(100 * time.Millisecond)
			l, err := mem.Acquire(ctx, ap)
			return l, err, true
		}
		s := newSched(t, p, nil)
		var mu sync.Mutex
		var latest time.Time
		for i := range 100 {
			must(s.Every(time.Minute).Locked("job-"+string(rune('a'+i%26))+string(rune('a'+i/26)), scheduler.AtMostFor(time.Minute)).Do(
				func(context.Context, scheduler.Run) error {
					mu.Lock()
					defer mu.Unlock()
					if now := time.Now(); now.After(latest) {
						latest = now
					}
					return nil
				}))
		}
		start(t, s)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if want := time.Date(2000, 1, 1, 0, 1, 0, int(100*time.Millisecond), time.UTC); !latest.Equal(want) {
			t.Errorf("last of 100 jobs started at %v, want %v (all claimed in parallel)", latest.UTC(), want)
		}
	})
}

// A tick due while the previous run on this instance is still going is
// skipped with ErrStillRunning.
func TestNoOverlapOnOneInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Observer: rec.hooks()})
		job := must(s.Every(time.Minute).Do(func(context.Context, scheduler.Run) error {
			time.Sleep(90 * time.Second)
			return nil
		}))
		start(t, s)
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		sk := rec.get("skipped")
		if len(sk) != 1 || !errors.Is(sk[0].Err, scheduler.ErrStillRunning) {
			t.Errorf("skipped = %+v, want one ErrStillRunning", sk)
		}
		if st := job.Stats(); st.Runs != 2 || st.Skips != 1 {
			t.Errorf("stats = %+v", st)
		}
	})
}

// Shutdown waits for a running job, then releases its lock.
func TestShutdownWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		s, err := scheduler.New(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var done atomic.Bool
		var runs atomic.Int32
		must(s.Every(time.Minute).Locked("w", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
			runs.Add(1)
			time.Sleep(20 * time.Second)
			if ctx.Err() != nil {
				t.Errorf("job context cancelled during a graceful shutdown: %v", context.Cause(ctx))
			}
			done.Store(true)
			return nil
		}))
		start(t, s)
		time.Sleep(time.Minute + 5*time.Second)
		t0 := time.Now()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if !done.Load() || time.Since(t0) != 15*time.Second {
			t.Errorf("Shutdown returned after %v, done=%v; want 15s, true", time.Since(t0), done.Load())
		}
		if info := must(p.Inspect(context.Background(), "w")); info.Held {
			t.Errorf("lock held after Shutdown: %+v", info)
		}
		time.Sleep(5 * time.Minute)
		if runs.Load() != 1 {
			t.Errorf("ran %d times; ticks fired after Shutdown", runs.Load())
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("second Shutdown: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after Shutdown: %v", err)
		}
		if err := s.Start(); !errors.Is(err, scheduler.ErrClosed) {
			t.Errorf("Start after Shutdown = %v, want ErrClosed", err)
		}
		if _, err := s.Every(time.Minute).Do(noop); !errors.Is(err, scheduler.ErrClosed) {
			t.Errorf("Do after Shutdown = %v, want ErrClosed", err)
		}
	})
}

// Shutdown cancels jobs (cause ErrClosed) when its context ends first, and
// still releases their locks.
func TestShutdownDeadlineCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		s := newSched(t, p, nil)
		var cause error
		must(s.Every(time.Minute).Locked("stuck", scheduler.AtMostFor(time.Hour)).Do(func(ctx context.Context, run scheduler.Run) error {
			<-ctx.Done()
			cause = context.Cause(ctx)
			time.Sleep(time.Second) // cleanup after cancellation
			return ctx.Err()
		}))
		start(t, s)
		time.Sleep(time.Minute + 5*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		t0 := time.Now()
		if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want DeadlineExceeded", err)
		}
		if d := time.Since(t0); d != 11*time.Second {
			t.Errorf("Shutdown took %v, want 11s (10s grace + 1s job cleanup)", d)
		}
		if !errors.Is(cause, scheduler.ErrClosed) {
			t.Errorf("job cause = %v, want ErrClosed", cause)
		}
		if info := must(p.Inspect(context.Background(), "stuck")); info.Held {
			t.Errorf("lock held after Shutdown: %+v", info)
		}
	})
}

func TestCloseCancelsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSched(t, newMemory(t, nil), nil)
		var cause error
		must(s.Every(time.Minute).Do(func(ctx context.Context, run scheduler.Run) error {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return nil
		}))
		start(t, s)
		start(t, s) // idempotent
		time.Sleep(time.Minute + time.Second)
		t0 := time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if time.Since(t0) != 0 || !errors.Is(cause, scheduler.ErrClosed) {
			t.Errorf("Close took %v, cause %v", time.Since(t0), cause)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestShutdownBeforeStart(t *testing.T) {
	s := newSched(t, newMemory(t, nil), nil)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); !errors.Is(err, scheduler.ErrClosed) {
		t.Errorf("Start = %v, want ErrClosed", err)
	}
}

// Jobs registered after Start are scheduled too.
func TestRegisterAfterStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSched(t, newMemory(t, nil), nil)
		start(t, s)
		time.Sleep(30 * time.Second)
		var ticks []time.Time
		job := must(s.Every(time.Minute).Locked("late", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
			ticks = append(ticks, run.Tick)
			return nil
		}))
		if want := time.Date(2000, 1, 1, 0, 1, 0, 0, time.UTC); !job.Next().Equal(want) {
			t.Errorf("Next = %v, want %v", job.Next(), want)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if len(ticks) != 2 {
			t.Errorf("ticks = %v, want 2", ticks)
		}
	})
}

// CatchUp runs the missed previous tick once at start-up, across
// replicas, and not when that tick already ran.
func TestCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		time.Sleep(3*time.Hour + 10*time.Minute) // 03:10; previous tick of Every(1h) is 03:00
		var mu sync.Mutex
		var runs []scheduler.Run
		job := func(ctx context.Context, run scheduler.Run) error {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, run)
			return nil
		}
		got := func() []scheduler.Run {
			mu.Lock()
			defer mu.Unlock()
			return append([]scheduler.Run(nil), runs...)
		}
		var scheds []*scheduler.Scheduler
		for range 3 {
			s := newSched(t, p, nil)
			must(s.Every(time.Hour).Locked("hourly", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(job))
			scheds = append(scheds, s)
		}
		for _, s := range scheds {
			start(t, s)
		}
		synctest.Wait()
		if runs := got(); len(runs) != 1 || !runs[0].CatchUp || !runs[0].Tick.Equal(time.Date(2000, 1, 1, 3, 0, 0, 0, time.UTC)) {
			t.Fatalf("runs after start = %+v, want one catch-up of 03:00", runs)
		}
		for _, s := range scheds {
			_ = s.Close()
		}

		// Restart within the same hour: 03:00 ran, nothing to catch up.
		time.Sleep(10 * time.Minute)
		s := newSched(t, p, nil)
		must(s.Every(time.Hour).Locked("hourly", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(job))
		start(t, s)
		synctest.Wait()
		if runs := got(); len(runs) != 1 {
			t.Errorf("runs after restart = %d, want still 1", len(runs))
		}
		time.Sleep(40 * time.Minute) // 04:00 regular tick
		synctest.Wait()
		if runs := got(); len(runs) != 2 || runs[1].CatchUp {
			t.Errorf("runs = %+v, want the regular 04:00 tick", runs)
		}
	})
}

func TestCatchUpCron(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(50 * time.Hour) // Monday 2000-01-03 02:00
		s := newSched(t, newMemory(t, nil), nil)
		var tick time.Time
		must(s.Cron("30 12 * * sat").Locked("weekly", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(func(ctx context.Context, run scheduler.Run) error {
			tick = run.Tick
			return nil
		}))
		start(t, s)
		synctest.Wait()
		if want := time.Date(2000, 1, 1, 12, 30, 0, 0, time.UTC); !tick.Equal(want) {
			t.Errorf("catch-up tick = %v, want %v", tick, want)
		}
	})
}

// With InspectOnSkip, a skipped replica learns who holds the lock.
func TestInspectOnSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		time.Sleep(30 * time.Second)
		rec := &recorder{}
		winner := newSched(t, p, &scheduler.Config{LockedBy: "winner"})
		loser := newSched(t, p, &scheduler.Config{LockedBy: "loser", Now: offsetClock(-time.Second), InspectOnSkip: true, Observer: rec.hooks()})
		for _, s := range []*scheduler.Scheduler{winner, loser} {
			must(s.Every(time.Minute).Locked("held", scheduler.AtMostFor(50*time.Second)).Do(func(context.Context, scheduler.Run) error {
				time.Sleep(10 * time.Second)
				return nil
			}))
			start(t, s)
		}
		time.Sleep(40 * time.Second)
		synctest.Wait()
		sk := rec.get("skipped")
		want := time.Date(2000, 1, 1, 0, 1, 50, 0, time.UTC)
		if len(sk) != 1 || sk[0].LockedBy != "winner" || !sk[0].Until.Equal(want) {
			t.Errorf("skipped = %+v, want holder winner until %v", sk, want)
		}
	})
}

// After a wall-clock step forward (or a long pause) only the latest missed
// tick runs, the others are reported skipped as missed, and the schedule
// continues from there.
func TestClockStepRunsLatestTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var step atomic.Int64
		rec := &recorder{}
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Observer: rec.hooks(), Now: func() time.Time { return time.Now().Add(time.Duration(step.Load())) }})
		var mu sync.Mutex
		var ticks []string
		must(s.Every(time.Minute).Locked("m", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
			mu.Lock()
			defer mu.Unlock()
			ticks = append(ticks, run.Tick.UTC().Format(time.TimeOnly))
			return nil
		}))
		start(t, s)
		time.Sleep(30 * time.Second)
		step.Store(int64(10 * time.Minute))      // local 00:10:30; the timer still waits for 00:01:00
		time.Sleep(time.Minute + 40*time.Second) // to local 00:12:10
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(ticks, " "); got != "00:11:00 00:12:00" {
			t.Errorf("ticks = %s, want 00:11:00 00:12:00", got)
		}
		sk := rec.get("skipped")
		var missed *scheduler.MissedError
		if len(sk) != 1 || !errors.As(sk[0].Err, &missed) || !errors.Is(sk[0].Err, scheduler.ErrMissed) ||
			missed.First.UTC().Format(time.TimeOnly) != "00:01:00" || missed.Last.UTC().Format(time.TimeOnly) != "00:10:00" {
			t.Errorf("skipped = %+v, want one skip reporting ticks 00:01:00 to 00:10:00 missed", sk)
		}
	})
}

// A catch-up that cannot read the last tick reports a failure and does not
// run; the regular schedule goes on.
func TestCatchUpInspectError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("store down")
		p := &faulty{Provider: newMemory(t, nil), inspect: boom}
		time.Sleep(90 * time.Second)
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{Observer: rec.hooks()})
		var runs atomic.Int32
		must(s.Every(time.Minute).Locked("c", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(func(context.Context, scheduler.Run) error {
			runs.Add(1)
			return nil
		}))
		start(t, s)
		synctest.Wait()
		f := rec.get("failed")
		if len(f) != 1 || !f[0].CatchUp || !errors.Is(f[0].Err, boom) || runs.Load() != 0 {
			t.Fatalf("failed = %+v, runs %d; want one catch-up failure and no run", f, runs.Load())
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if runs.Load() != 1 {
			t.Errorf("regular tick runs = %d, want 1", runs.Load())
		}
	})
}
