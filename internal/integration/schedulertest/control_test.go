package schedulertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// runLog records the calls of job functions.
type runLog struct {
	mu   sync.Mutex
	runs []loggedRun
}

type loggedRun struct {
	replica    string
	run        scheduler.Run
	start, end time.Time
}

func (l *runLog) add(replica string, run scheduler.Run, start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, loggedRun{replica: replica, run: run, start: start, end: time.Now()})
}

func (l *runLog) get() []loggedRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.runs)
}

// scheduled returns the scheduled runs by tick, failing on a tick that
// ran twice.
func (l *runLog) scheduled(t *testing.T) map[int64]loggedRun {
	t.Helper()
	out := map[int64]loggedRun{}
	for _, r := range l.get() {
		if r.run.Manual || r.run.Attempt > 1 {
			continue
		}
		k := r.run.Tick.UnixMilli()
		if prev, dup := out[k]; dup {
			t.Errorf("tick %v ran twice: on %s and on %s", r.run.Tick, prev.replica, r.replica)
		}
		out[k] = r
	}
	return out
}

func (l *runLog) manual() []loggedRun {
	var out []loggedRun
	for _, r := range l.get() {
		if r.run.Manual {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls cond every 10ms for up to limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Three instances on one backend: RunNow on each runs the job exactly
// once, as a manual run that does not take a scheduled tick's place (a
// tick during a manual run still runs); a cluster-wide pause stops the
// runs on every replica within one tick and resume restarts them.
func TestControlThreeInstances(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			controlThreeInstances(t, backend)
		})
	}
}

func controlThreeInstances(t *testing.T, backend string) {
	const iv = 300 * time.Millisecond
	ps := opsProviders(t, backend, 3)
	var (
		log    runLog
		scheds []*scheduler.Scheduler
		recs   []*recorder
	)
	for i, p := range ps {
		name := fmt.Sprintf("%s-replica-%d", backend, i)
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{LockedBy: name, Ledger: true, Observer: rec.hooks(), RegistryTTL: 2 * time.Second})
		_, err := s.Every(iv).Locked("job", scheduler.AtMostFor(5*time.Second)).Do(func(ctx context.Context, run scheduler.Run) error {
			start := time.Now()
			if run.Manual {
				// Hold the lock across the next tick.
				time.Sleep(iv * 3 / 4)
			}
			log.add(name, run, start)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		scheds, recs = append(scheds, s), append(recs, rec)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * iv)

	// RunNow from each instance, one after the other, each 100ms before
	// a tick, so that the manual run (3/4 of an interval) holds the lock
	// across that tick and ends well before the next one.
	for i, s := range scheds {
		time.Sleep(iv - time.Duration(time.Now().UnixNano()%int64(iv)) - 100*time.Millisecond + iv)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		if err := s.RunNow(ctx, "job"); err != nil {
			t.Fatalf("RunNow on replica %d: %v", i, err)
		}
		cancel()
		waitFor(t, 10*time.Second, "manual run", func() bool { return len(log.manual()) == i+1 })
	}
	time.Sleep(2 * iv)
	manual := log.manual()
	for i, m := range manual {
		want := fmt.Sprintf("%s-replica-%d", backend, i)
		if m.replica != want || !m.run.Tick.IsZero() || m.run.Token == 0 {
			t.Errorf("manual run %d: %+v on %s, want on %s with no tick and a token", i, m.run, m.replica, want)
		}
	}
	// The latest tick that came while a manual run held the lock ran
	// after it; no tick ran during it. (A manual run slowed past two
	// ticks, on a loaded machine, hands off only the latest, as a
	// paused scheduler does.)
	sched := log.scheduled(t)
	for _, m := range manual {
		first := time.UnixMilli((m.start.UnixMilli()/iv.Milliseconds() + 1) * iv.Milliseconds())
		var latest time.Time
		for tick := first; tick.Before(m.end); tick = tick.Add(iv) {
			latest = tick
			if r, ok := sched[tick.UnixMilli()]; ok && r.start.Before(m.end) {
				t.Errorf("tick %v ran on %s at %v, during the manual run", tick, r.replica, r.start)
			}
		}
		if latest.IsZero() {
			continue
		}
		if _, ok := sched[latest.UnixMilli()]; !ok {
			t.Errorf("tick %v, the latest during the manual run [%v, %v] on %s, never ran", latest, m.start, m.end, m.replica)
		}
	}

	// Cluster-wide pause from one instance: within one tick no replica
	// runs the job; resume restarts it.
	if err := scheds[1].Pause(t.Context(), "job"); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	time.Sleep(iv)
	before := len(log.scheduled(t))
	pausedAt := time.Now()
	time.Sleep(4 * iv)
	if after := log.scheduled(t); len(after) != before {
		for _, r := range after {
			if r.start.After(pausedAt) {
				t.Errorf("paused job ran tick %v on %s at %v", r.run.Tick, r.replica, r.start)
			}
		}
	}
	for i, rec := range recs {
		n := 0
		for _, ev := range rec.get("skipped") {
			if errors.Is(ev.Err, scheduler.ErrPaused) {
				n++
			}
		}
		if n < 2 {
			t.Errorf("replica %d reported %d ErrPaused skips in 4 ticks of pause", i, n)
		}
	}
	if err := scheds[2].Resume(t.Context(), "job"); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	waitFor(t, 6*iv, "a run after resume", func() bool { return len(log.scheduled(t)) >= before+2 })

	for _, s := range scheds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		cancel()
	}
	// The ledger: the three manual runs marked as such, without a tick,
	// and one record per scheduled tick.
	runs, err := ps[0].(lockprovider.Ledger).Runs(t.Context(), batontype.RunQuery{Job: "job", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var nManual, nSched int
	for _, r := range runs {
		switch {
		case r.Manual && r.Tick.IsZero():
			nManual++
		case r.Manual:
			t.Errorf("manual record with a tick: %+v", r)
		default:
			nSched++
		}
	}
	if nManual != 3 || nSched != len(log.scheduled(t)) {
		t.Errorf("ledger: %d manual and %d scheduled records, want 3 and %d", nManual, nSched, len(log.scheduled(t)))
	}
}

// Run requests made through the provider (as baton jobs run does) are
// run exactly once, by a replica that has the job.
func TestControlRunRequests(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ps := opsProviders(t, backend, 4)
			var log runLog
			for i, p := range ps[:3] {
				name := fmt.Sprintf("replica-%d", i)
				s := newSched(t, p, &scheduler.Config{LockedBy: name})
				job := "job"
				if i == 2 {
					job = "other" // this replica cannot take the requests
				}
				_, err := s.Every(time.Hour).Locked(job, scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
					log.add(name, run, time.Now())
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Start(); err != nil {
					t.Fatal(err)
				}
			}
			ctl := ps[3].(lockprovider.Control)
			for range 5 {
				if _, err := ctl.RequestRun(t.Context(), batontype.RunRequest{Job: "job", RequestedBy: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 10*time.Second, "5 requested runs", func() bool { return len(log.manual()) >= 5 })
			time.Sleep(200 * time.Millisecond)
			for _, r := range log.manual() {
				if r.replica == "replica-2" {
					t.Errorf("a replica without the job ran it: %+v", r)
				}
			}
			if n := len(log.manual()); n != 5 {
				t.Errorf("%d manual runs for 5 requests", n)
			}
			st, err := ctl.ControlState(t.Context())
			if err != nil || len(st.Requests) != 0 {
				t.Errorf("pending requests after the runs: %+v, %v", st.Requests, err)
			}
		})
	}
}

// Retry calls the job again within the same claimed tick (same token),
// extending the lease over the backoff; the hooks see every attempt and
// the ledger one record with the attempts in its text.
func TestRetry(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			p := opsProviders(t, backend, 1)[0]
			rec := &recorder{}
			s := newSched(t, p, &scheduler.Config{Ledger: true, Observer: rec.hooks()})
			var log runLog
			calls := map[string]int{}
			var mu sync.Mutex
			job := func(name string, failures int) {
				// AtMostFor shorter than the backoff: without the extension
				// the lease would lapse between attempts.
				_, err := s.Every(time.Hour).Locked(name, scheduler.AtMostFor(time.Second)).Retry(2, 1200*time.Millisecond).
					Do(func(ctx context.Context, run scheduler.Run) error {
						log.add(name, run, time.Now())
						if err := run.Check(); err != nil {
							return err
						}
						mu.Lock()
						defer mu.Unlock()
						calls[name]++
						if calls[name] <= failures {
							return fmt.Errorf("failure %d", calls[name])
						}
						return nil
					})
				if err != nil {
					t.Fatal(err)
				}
			}
			job("recovers", 2)
			job("gives-up", 5)
			for _, name := range []string{"recovers", "gives-up"} {
				if err := s.RunNow(t.Context(), name); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			byJob := map[string][]loggedRun{}
			for _, r := range log.get() {
				byJob[r.replica] = append(byJob[r.replica], r)
			}
			for _, name := range []string{"recovers", "gives-up"} {
				rs := byJob[name]
				if len(rs) != 3 {
					t.Fatalf("%s: %d calls, want 3", name, len(rs))
				}
				for i, r := range rs {
					if r.run.Attempt != i+1 || r.run.Token != rs[0].run.Token {
						t.Errorf("%s call %d: attempt %d token %d, want attempt %d token %d", name, i, r.run.Attempt, r.run.Token, i+1, rs[0].run.Token)
					}
				}
			}
			var attempts []string
			for _, ev := range rec.get("failed") {
				attempts = append(attempts, fmt.Sprintf("%s/%d", ev.Job, ev.Attempt))
			}
			slices.Sort(attempts)
			if want := []string{"gives-up/1", "gives-up/2", "gives-up/3", "recovers/1", "recovers/2"}; !slices.Equal(attempts, want) {
				t.Errorf("Failed hooks %v, want %v", attempts, want)
			}
			if ok := rec.get("succeeded"); len(ok) != 1 || ok[0].Job != "recovers" || ok[0].Attempt != 3 {
				t.Errorf("Succeeded hooks %+v, want recovers at attempt 3", ok)
			}
			if lost := rec.get("lost"); len(lost) != 0 {
				t.Errorf("lease lost during retries: %+v", lost)
			}
			// A manual run of a locked job is announced like a tick's claim,
			// once per run however many attempts it makes.
			if at := rec.get("attempt"); len(at) != 2 || !at[0].Manual || !at[1].Manual || !at[0].Tick.IsZero() {
				t.Errorf("Attempt hooks %+v, want one per manual run, with Manual set and no tick", at)
			}
			led := p.(lockprovider.Ledger)
			for name, want := range map[string]struct {
				out  batontype.Outcome
				text string
			}{
				"recovers": {batontype.OutcomeSucceeded, "succeeded at attempt 3 of 3; attempt 2 failed: failure 2"},
				"gives-up": {batontype.OutcomeFailed, "attempt 3 of 3: failure 3"},
			} {
				runs, err := led.Runs(t.Context(), batontype.RunQuery{Job: name})
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != 1 || runs[0].Outcome != want.out || runs[0].Error != want.text {
					t.Errorf("%s ledger: %+v, want one record %s %q", name, runs, want.out, want.text)
				}
			}
		})
	}
}

// Jitter delays each run by JitterOf(job, tick): never earlier, the same
// delay on every replica (one run per tick across three), different
// across jobs.
func TestJitter(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const iv, jit = 400 * time.Millisecond, 300 * time.Millisecond
			ps := opsProviders(t, backend, 3)
			var log runLog
			for i, p := range ps {
				name := fmt.Sprintf("replica-%d", i)
				s := newSched(t, p, &scheduler.Config{LockedBy: name})
				for _, job := range []string{"a", "b"} {
					_, err := s.Every(iv).Locked(job, scheduler.AtMostFor(time.Second)).Jitter(jit).
						Do(func(ctx context.Context, run scheduler.Run) error {
							log.add(job, run, time.Now())
							return nil
						})
					if err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Start(); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(6 * iv)
			seen := map[string]bool{}
			differ := false
			for _, r := range log.get() {
				key := r.replica + r.run.Tick.String()
				if seen[key] {
					t.Errorf("job %s tick %v ran twice", r.replica, r.run.Tick)
				}
				seen[key] = true
				d := scheduler.JitterOf(r.replica, r.run.Tick, jit)
				if r.start.Before(r.run.Tick.Add(d)) {
					t.Errorf("job %s tick %v started at +%v, before its jitter %v", r.replica, r.run.Tick, r.start.Sub(r.run.Tick), d)
				}
				if d != scheduler.JitterOf(map[string]string{"a": "b", "b": "a"}[r.replica], r.run.Tick, jit) {
					differ = true
				}
			}
			if len(seen) < 6 {
				t.Errorf("only %d runs of 2 jobs in 6 ticks", len(seen))
			}
			if !differ {
				t.Error("jobs a and b got the same delay at every tick")
			}
		})
	}
}

// A cron schedule's Jitter is not checked against the gaps between its
// ticks: when a tick's delay outlasts the gap plus the next tick's delay,
// the next tick is claimed first and the earlier one is refused as stale
// on every replica, as docs/semantics.md says (it once said the next tick
// would be skipped with ErrStillRunning).
func TestCronJitterLongerThanGap(t *testing.T) {
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const jit = 1900 * time.Millisecond
			// A name and a tick, at least a second ahead, whose delay ends
			// well after the next tick's (one second later) delay ends.
			var job string
			var late time.Time
			first := time.Now().Truncate(time.Second).Add(2 * time.Second)
			for i := 0; job == ""; i++ {
				name := fmt.Sprintf("%s-%d", t.Name(), i)
				for tick := first; tick.Before(first.Add(3 * time.Second)); tick = tick.Add(time.Second) {
					if scheduler.JitterOf(name, tick, jit) > time.Second+scheduler.JitterOf(name, tick.Add(time.Second), jit)+300*time.Millisecond {
						job, late = name, tick
						break
					}
				}
			}
			var rec recorder
			for i, p := range opsProviders(t, backend, 3) {
				s := newSched(t, p, &scheduler.Config{LockedBy: fmt.Sprintf("replica-%d", i), Observer: rec.hooks()})
				_, err := s.Cron("* * * * * *").Locked(job, scheduler.AtMostFor(5*time.Second)).Jitter(jit).
					Do(func(context.Context, scheduler.Run) error { return nil })
				if err != nil {
					t.Fatalf("Jitter longer than the cron gap: %v, want it accepted", err)
				}
				if err := s.Start(); err != nil {
					t.Fatal(err)
				}
			}
			next := late.Add(time.Second)
			waitFor(t, time.Until(next)+jit+5*time.Second, "the next tick's run", func() bool {
				for _, ev := range rec.get("started") {
					if ev.Tick.Equal(next) {
						return true
					}
				}
				return false
			})
			// The late tick's claims come after the next tick's grant.
			waitFor(t, time.Until(late.Add(jit))+5*time.Second, "the late tick's refusals", func() bool {
				n := 0
				for _, ev := range rec.get("skipped") {
					if ev.Tick.Equal(late) && errors.Is(ev.Err, scheduler.ErrStaleTick) {
						n++
					}
				}
				return n == 3
			})
			for _, ev := range rec.get("started") {
				if ev.Tick.Equal(late) {
					t.Errorf("tick %v ran, although the next tick was granted before its delayed claim", late)
				}
			}
		})
	}
}

// A local pause skips this instance's ticks with ErrPaused while the
// other replicas keep running the job; Remove stops a job without
// cancelling its run in progress.
func TestPauseLocalAndRemove(t *testing.T) {
	t.Parallel()
	const iv = 100 * time.Millisecond
	p := newMemory(t, nil)
	var log runLog
	var jobs []*scheduler.Job
	var recs []*recorder
	var scheds []*scheduler.Scheduler
	for i := range 2 {
		name := fmt.Sprintf("replica-%d", i)
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{LockedBy: name, Observer: rec.hooks()})
		j, err := s.Every(iv).Locked("job", scheduler.AtMostFor(time.Second)).Do(func(ctx context.Context, run scheduler.Run) error {
			log.add(name, run, time.Now())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		jobs, recs, scheds = append(jobs, j), append(recs, rec), append(scheds, s)
	}
	jobs[0].Pause()
	if !jobs[0].Paused() || jobs[1].Paused() {
		t.Fatal("Paused disagrees with Pause")
	}
	time.Sleep(iv)
	from := time.Now()
	time.Sleep(5 * iv)
	var here, there int
	for _, r := range log.get() {
		switch {
		case r.start.Before(from):
		case r.replica == "replica-0":
			here++
		default:
			there++
		}
	}
	if here != 0 || there < 3 {
		t.Errorf("with replica-0 paused: %d runs there, %d on replica-1; want none and most ticks", here, there)
	}
	if n := len(recs[0].get("skipped")); n < 3 || !errors.Is(recs[0].get("skipped")[0].Err, scheduler.ErrPaused) {
		t.Errorf("replica-0 skips: %+v, want ErrPaused at each tick", recs[0].get("skipped"))
	}
	jobs[0].Resume()

	// Remove while a run is in progress: the run completes, no run after.
	release := make(chan struct{})
	var done sync.WaitGroup
	done.Add(1)
	_, err := scheds[1].Every(time.Hour).Locked("slow", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
		defer done.Done()
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := scheds[1].RunNow(t.Context(), "slow"); err != nil {
		t.Fatal(err)
	}
	if err := scheds[1].Remove("slow"); err != nil {
		t.Fatal(err)
	}
	if err := scheds[1].Remove("job"); err != nil {
		t.Fatal(err)
	}
	close(release)
	done.Wait()
	waitFor(t, 5*time.Second, "the removed job's run in progress completes", func() bool {
		return slices.ContainsFunc(recs[1].get("succeeded"), func(ev scheduler.Event) bool { return ev.Job == "slow" && ev.Manual })
	})
	time.Sleep(iv)
	n := len(log.get())
	time.Sleep(3 * iv)
	for _, r := range log.get()[n:] {
		if r.replica == "replica-1" {
			t.Errorf("removed job ran on replica-1: %+v", r.run)
		}
	}
	err = scheds[1].Remove("job")
	if !errors.Is(err, scheduler.ErrUnknownJob) || !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("second Remove: %v, want ErrUnknownJob", err)
	}
	if err := scheds[1].RunNow(t.Context(), "job"); !errors.Is(err, scheduler.ErrUnknownJob) {
		t.Errorf("RunNow of a removed job: %v, want ErrUnknownJob", err)
	}
	// The name can be registered again.
	if _, err := scheds[1].Every(iv).Locked("job", scheduler.AtMostFor(time.Second)).Do(func(context.Context, scheduler.Run) error { return nil }); err != nil {
		t.Errorf("registering a removed name again: %v", err)
	}
}

// RunNow waits while another run holds the job's lock, up to its ctx.
func TestRunNowWaitsForTheLock(t *testing.T) {
	t.Parallel()
	p := newMemory(t, nil)
	holder := lockprovider.NewOwner()
	if _, err := p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "job", Owner: holder, AtMostFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	s := newSched(t, p, nil)
	ran := make(chan scheduler.Run, 1)
	if _, err := s.Every(time.Hour).Locked("job", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
		ran <- run
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := s.RunNow(ctx, "job"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RunNow while the lock is held elsewhere: %v, want DeadlineExceeded", err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = p.Release(context.Background(), lockprovider.ReleaseParams{Name: "job", Owner: holder})
	}()
	if err := s.RunNow(t.Context(), "job"); err != nil {
		t.Fatalf("RunNow: %v", err)
	}
	if r := <-ran; !r.Manual || r.Token == 0 {
		t.Errorf("run %+v, want a manual run with a token", r)
	}
}

// A timeout ends an unlocked job's context with ErrTimeout.
func TestTimeoutUnlocked(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s := newSched(t, newMemory(t, nil), &scheduler.Config{Observer: rec.hooks()})
	if _, err := s.Every(time.Hour).Name("slow").Timeout(50 * time.Millisecond).Do(func(ctx context.Context, run scheduler.Run) error {
		<-ctx.Done()
		return context.Cause(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow(t.Context(), "slow"); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f := rec.get("failed"); len(f) != 1 || !errors.Is(f[0].Err, scheduler.ErrTimeout) || !f[0].Manual {
		t.Errorf("Failed hooks %+v, want one manual run ending with ErrTimeout", f)
	}
}

// Bad control input is a typed error.
func TestControlValidation(t *testing.T) {
	t.Parallel()
	s := newSched(t, newMemory(t, nil), nil)
	fn := func(context.Context, scheduler.Run) error { return nil }
	for _, c := range []struct {
		b     *scheduler.Builder
		field string
		want  error
	}{
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Retry(0, time.Second), "Retry", scheduler.ErrInvalidOption},
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Retry(scheduler.MaxRetries+1, time.Second), "Retry", scheduler.ErrInvalidOption},
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Retry(1, -time.Second), "Retry", scheduler.ErrInvalidDuration},
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Retry(60, time.Hour), "Retry", scheduler.ErrInvalidDuration},
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Jitter(0), "Jitter", scheduler.ErrInvalidDuration},
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Jitter(time.Second), "Jitter", scheduler.ErrInvalidDuration},
		{s.Every(time.Second).Name("a").Timeout(0), "Timeout", scheduler.ErrInvalidDuration},
		{s.Every(time.Second).Locked("a", scheduler.AtMostFor(time.Second)).Timeout(time.Second), "Timeout", scheduler.ErrInvalidOption},
	} {
		_, err := c.b.Do(fn)
		var ve *scheduler.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !errors.Is(err, c.want) || !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("%s: %v, want a *ValidationError for %s matching %v", c.field, err, c.field, c.want)
		}
	}
	if err := s.RunNow(t.Context(), "nope"); !errors.Is(err, scheduler.ErrUnknownJob) {
		t.Errorf("RunNow of an unknown job: %v", err)
	}
	if err := s.RunNow(t.Context(), ""); !errors.Is(err, scheduler.ErrUnknownJob) || !strings.Contains(err.Error(), `RunNow "":`) {
		t.Errorf("RunNow of an empty name: %v, want ErrUnknownJob naming \"\"", err)
	}
	if err := s.Pause(t.Context(), ""); !errors.Is(err, batontype.ErrInvalidName) {
		t.Errorf("Pause of an empty name: %v", err)
	}
	// A nil ctx is bad input: a typed error, not a panic (RunNow used to
	// panic on a goroutine of its own, which no recover of the caller's
	// could catch).
	var nilCtx context.Context
	for name, err := range map[string]error{
		"RunNow": s.RunNow(nilCtx, "a"),
		"Pause":  s.Pause(nilCtx, "a"),
		"Resume": s.Resume(nilCtx, "a"),
	} {
		if !errors.Is(err, scheduler.ErrNilContext) || !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("%s(nil ctx): %v, want ErrNilContext", name, err)
		}
	}
	if _, err := jobstate.Check(nilCtx, newMemory(t, nil), jobstate.CheckOptions{}); !errors.Is(err, scheduler.ErrNilContext) {
		t.Errorf("Check(nil ctx): %v, want ErrNilContext", err)
	}
	bareS := newSched(t, bare{newMemory(t, nil)}, nil)
	if err := bareS.Pause(t.Context(), "a"); !errors.Is(err, scheduler.ErrControlNotSupported) {
		t.Errorf("Pause without lockprovider.Control: %v", err)
	}
	if _, err := scheduler.New(newMemory(t, nil), &scheduler.Config{ControlPoll: -time.Second}); !errors.Is(err, scheduler.ErrInvalidDuration) {
		t.Errorf("negative ControlPoll: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow(t.Context(), "a"); !errors.Is(err, scheduler.ErrClosed) {
		t.Errorf("RunNow after Close: %v", err)
	}
	if err := s.Remove("a"); !errors.Is(err, scheduler.ErrClosed) {
		t.Errorf("Remove after Close: %v", err)
	}
	// Shutdown is a clean-up path: a nil ctx waits without bound, as
	// Lock.Release's does.
	if err := s.Shutdown(nilCtx); err != nil {
		t.Errorf("Shutdown(nil ctx) after Close: %v", err)
	}
	fresh := newSched(t, newMemory(t, nil), nil)
	if err := fresh.Start(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Shutdown(nilCtx); err != nil {
		t.Errorf("Shutdown(nil ctx): %v", err)
	}
	if !strings.Contains(scheduler.ErrPaused.Error(), "paused") {
		t.Error("ErrPaused does not say paused")
	}
}

// deaf is a memory provider whose control announcements never arrive.
type deaf struct{ *memory.Provider }

func (deaf) WatchControl(context.Context, chan<- struct{}) (func(), error) {
	return nil, errors.New("no listener")
}

// An instance that hears no announcements still follows the control
// state at every ControlPoll: a pause made elsewhere reaches it, and a
// run request made while it was not listening runs.
func TestControlWithoutAnnouncements(t *testing.T) {
	t.Parallel()
	p := newMemory(t, nil)
	s := newSched(t, deaf{p}, &scheduler.Config{ControlPoll: 50 * time.Millisecond})
	ran := make(chan scheduler.Run, 1)
	job, err := s.Every(time.Hour).Locked("job", scheduler.AtMostFor(time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
		ran <- run
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.RequestRun(t.Context(), batontype.RunRequest{Job: "job"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ran:
		if !r.Manual {
			t.Errorf("run %+v, want the requested manual run", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request made before Start never ran")
	}
	if err := p.SetPaused(t.Context(), "job", true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "pause seen by polling", job.Paused)
}

// countingControl counts the control-state reads of a memory provider.
type countingControl struct {
	*memory.Provider
	reads atomic.Int64
}

func (c *countingControl) ControlState(ctx context.Context) (batontype.ControlState, error) {
	c.reads.Add(1)
	return c.Provider.ControlState(ctx)
}

// Honouring pauses costs no round trip per tick: 20 jobs ticking every
// 50ms for a second read the control state once at Start (and on
// announcements), not once per tick or job.
func TestPauseCheckNoRoundTripPerTick(t *testing.T) {
	t.Parallel()
	p := &countingControl{Provider: newMemory(t, nil)}
	s := newSched(t, p, nil)
	var runs atomic.Int64
	for i := range 20 {
		if _, err := s.Every(50*time.Millisecond).Locked(fmt.Sprintf("job-%d", i), scheduler.AtMostFor(time.Second)).Do(func(context.Context, scheduler.Run) error {
			runs.Add(1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n, r := p.reads.Load(), runs.Load(); r < 100 || n > 2 {
		t.Errorf("%d runs and %d control-state reads in 1s; want most of the 400 ticks run and at most 2 reads", r, n)
	}
}

// The dead-man's switch does not report the ticks of a job paused
// cluster-wide; it lists the job as paused.
func TestCheckSkipsPausedJobs(t *testing.T) {
	t.Parallel()
	p := newMemory(t, nil)
	now := time.Now()
	inst := batontype.Instance{LockedBy: "a", Started: now.Add(-48 * time.Hour), Jobs: []batontype.JobSpec{
		{Name: "hourly", Schedule: "@every 1h0m0s", Locked: true, AtMostFor: time.Minute},
	}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	rep, err := jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: now})
	if err != nil || len(rep.Problems) != 1 {
		t.Fatalf("Check of a job that never ran: %+v, %v; want one missed tick", rep.Problems, err)
	}
	if err := p.SetPaused(t.Context(), "hourly", true); err != nil {
		t.Fatal(err)
	}
	rep, err = jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: now})
	if err != nil || !rep.OK() || !slices.Equal(rep.Paused, []string{"hourly"}) || len(rep.Checked) != 0 {
		t.Errorf("Check of a paused job: %+v, %v; want OK, not checked, listed as paused", rep, err)
	}
}

// Once resumed, the ticks of a cluster-wide pause are paused ticks, not
// missed ones: Check (with Since) reports the unclaimed ticks before and
// after the pause the backend remembers, never those within it.
func TestCheckResumedPauseSpan(t *testing.T) {
	t.Parallel()
	base := time.Now().UTC().Truncate(time.Hour)
	var clock atomic.Int64 // the backend's clock, set by the test
	p := newMemory(t, &memory.Config{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	set := func(t time.Time) { clock.Store(t.UnixNano()) }
	spec := func(name string) batontype.JobSpec {
		return batontype.JobSpec{Name: name, Schedule: "0 * * * *", TimeZone: "UTC", Locked: true, AtMostFor: time.Minute}
	}
	set(base.Add(-5*time.Hour - 30*time.Minute))
	if err := p.SetPaused(t.Context(), "hourly", true); err != nil {
		t.Fatal(err)
	}
	set(base.Add(-2*time.Hour - 30*time.Minute))
	if err := p.SetPaused(t.Context(), "hourly", false); err != nil {
		t.Fatal(err)
	}
	set(base.Add(30 * time.Minute))
	inst := batontype.Instance{LockedBy: "a", Started: base.Add(-10 * time.Hour), Jobs: []batontype.JobSpec{spec("hourly"), spec("other")}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	rep, err := jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: base.Add(30 * time.Minute), Since: base.Add(-10 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	missed := map[string][]time.Time{}
	for _, pr := range rep.Problems {
		if pr.Kind != "missed" {
			t.Errorf("problem %+v, want only missed ticks", pr)
		}
		missed[pr.Job] = append(missed[pr.Job], pr.Tick)
	}
	var want []time.Time // hours -9 to 0 but -5, -4 and -3 (the pause)
	for h := -9; h <= 0; h++ {
		if h < -5 || h > -3 {
			want = append(want, base.Add(time.Duration(h)*time.Hour))
		}
	}
	if got := missed["hourly"]; !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("missed ticks of the resumed job:\n got %v\nwant %v (none within the pause)", got, want)
	}
	if got := missed["other"]; len(got) != 10 {
		t.Errorf("missed ticks of the job never paused: %v, want 10", got)
	}
	if len(rep.Paused) != 0 || !slices.Equal(rep.Checked, []string{"hourly", "other"}) {
		t.Errorf("Checked %q, Paused %q: want both checked, none paused", rep.Checked, rep.Paused)
	}
}

// A job paused cluster-wide does not catch up when an instance starts:
// while it is paused no replica runs its ticks, so its latest tick before
// Start always looks missed, and a restart during an incident must not
// run it.
func TestCatchUpPausedCluster(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			p := opsProviders(t, backend, 1)[0]
			if err := p.(lockprovider.Control).SetPaused(t.Context(), "paused", true); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			s := newSched(t, p, &scheduler.Config{Observer: rec.hooks(), DisableRegistry: true})
			var ran atomic.Int32
			_, err := s.Every(time.Hour).Locked("paused", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(func(context.Context, scheduler.Run) error {
				ran.Add(1)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "the catch-up is skipped", func() bool { return len(rec.get("skipped")) > 0 })
			_ = s.Close()
			if ev := rec.get("skipped")[0]; !ev.CatchUp || !errors.Is(ev.Err, scheduler.ErrPaused) {
				t.Errorf("skip: %+v, want a catch-up skipped with ErrPaused", ev)
			}
			if n := ran.Load(); n != 0 {
				t.Errorf("the paused job ran %d times at start-up", n)
			}
		})
	}
}

// holdClaim is a provider whose ClaimRun waits for proceed after telling
// entered, so that a test can stop the scheduler in between.
type holdClaim struct {
	lockprovider.Provider
	lockprovider.Control
	entered, proceed chan struct{}
}

func (h *holdClaim) ClaimRun(_ context.Context, id string) (batontype.RunRequest, error) {
	h.entered <- struct{}{}
	<-h.proceed
	return h.Control.ClaimRun(context.Background(), id)
}

// A run request that an instance claims while Shutdown begins is run
// (Shutdown waits for it) or left for another instance, never dropped.
func TestRunRequestDuringShutdown(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ps := opsProviders(t, backend, 2)
			p := &holdClaim{Provider: ps[0], Control: ps[0].(lockprovider.Control), entered: make(chan struct{}, 1), proceed: make(chan struct{})}
			s := newSched(t, p, &scheduler.Config{DisableRegistry: true})
			var ran atomic.Int32
			if _, err := s.Every(time.Hour).Locked("job", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error {
				ran.Add(1)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			ctl := ps[1].(lockprovider.Control)
			if _, err := ctl.RequestRun(t.Context(), batontype.RunRequest{Job: "job"}); err != nil {
				t.Fatal(err)
			}
			<-p.entered
			done := make(chan error, 1)
			go func() { done <- s.Shutdown(t.Context()) }()
			waitFor(t, 5*time.Second, "Shutdown begins", func() bool { return errors.Is(s.Remove("nosuch"), scheduler.ErrClosed) })
			close(p.proceed)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			st, err := ctl.ControlState(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if n := ran.Load(); n+int32(len(st.Requests)) != 1 {
				t.Errorf("after Shutdown: %d runs and %d pending requests; want the request run once or still pending", n, len(st.Requests))
			}
		})
	}
}

// A jittered tick whose claim comes while a manual run holds the lock is
// run after the manual run, like a tick without jitter, even when the
// tick itself came more than the hand-off margin before the manual run.
func TestJitterDuringManualRun(t *testing.T) {
	for _, backend := range []string{"memory", "redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const period, jitter = 2 * time.Second, 1900 * time.Millisecond
			tick := time.Now().Add(500 * time.Millisecond).Truncate(period).Add(period)
			// The tick's claim comes after the hand-off margin (1s) and
			// leaves the manual run time to start first; the next tick's
			// claim comes a second or more after the manual run ends
			// (300ms past this tick's claim). Were the next claim also
			// inside the manual run, the hand-off would run that later
			// tick instead, as it should: the latest tick refused.
			var name string
			for i := 0; name == ""; i++ {
				n := fmt.Sprint("job-", i)
				if d := scheduler.JitterOf(n, tick, jitter); d >= 1400*time.Millisecond && d <= 1500*time.Millisecond &&
					scheduler.JitterOf(n, tick.Add(period), jitter) >= time.Second {
					name = n
				}
			}
			claimAt := tick.Add(scheduler.JitterOf(name, tick, jitter))
			var log runLog
			var scheds []*scheduler.Scheduler
			for i, p := range opsProviders(t, backend, 2) {
				replica := fmt.Sprintf("replica-%d", i)
				s := newSched(t, p, &scheduler.Config{LockedBy: replica, DisableRegistry: true})
				_, err := s.Every(period).Locked(name, scheduler.AtMostFor(10*time.Second)).Jitter(jitter).Do(func(ctx context.Context, run scheduler.Run) error {
					if run.Manual {
						// Hold the lock past the tick's claim.
						time.Sleep(time.Until(claimAt.Add(300 * time.Millisecond)))
					}
					log.add(replica, run, time.Now())
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Start(); err != nil {
					t.Fatal(err)
				}
				scheds = append(scheds, s)
			}
			// After the hand-off margin (1s) past the tick, before its claim.
			time.Sleep(time.Until(tick.Add(1100 * time.Millisecond)))
			if err := scheds[0].RunNow(t.Context(), name); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "the tick whose claim came during the manual run runs", func() bool {
				_, ok := log.scheduled(t)[tick.UnixMilli()]
				return ok
			})
		})
	}
}
