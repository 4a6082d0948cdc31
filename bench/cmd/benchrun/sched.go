package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-co-op/gocron/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tickSample is one tick of one scheduler: the time from the tick to the
// last claim (the last job function started) and the process's CPU time
// from just before the tick until every lock was released.
type tickSample struct {
	toLast time.Duration
	cpu    time.Duration
	claims int
}

// tickRun registers jobs locked jobs due once at tick on each of
// instances schedulers (each on a backend client of its own), starts them
// and returns a function that stops them.
type tickRun func(ctx context.Context, jobs, instances int, tick time.Time, claimed func(), released func(error)) (stop func(), err error)

// countingProvider counts releases, so the measurement can end when the
// last lock is given back.
type countingProvider struct {
	lockprovider.Provider
	released func(error)
}

func (c countingProvider) Release(ctx context.Context, p lockprovider.ReleaseParams) error {
	err := c.Provider.Release(ctx, p)
	c.released(err)
	return err
}

// batcher is a provider with batch claims and releases, as baton's Redis
// and PostgreSQL providers are.
type batcher interface {
	lockprovider.Provider
	lockprovider.BatchAcquirer
	lockprovider.BatchReleaser
}

// countingBatcher is countingProvider for a batcher: it passes the batch
// claims through and counts each item of a batch release.
type countingBatcher struct {
	countingProvider
	lockprovider.BatchAcquirer
	br lockprovider.BatchReleaser
}

func (c countingBatcher) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	errs, err := c.br.ReleaseBatch(ctx, ps)
	for i := range ps {
		switch {
		case err != nil:
			c.released(err)
		case i < len(errs):
			c.released(errs[i])
		}
	}
	return errs, err
}

// counting wraps p, keeping its batch claims and releases.
func counting(p lockprovider.Provider, released func(error)) lockprovider.Provider {
	c := countingProvider{p, released}
	if b, ok := p.(batcher); ok {
		return countingBatcher{c, b, b}
	}
	return c
}

// batonSchedulers starts instances schedulers, each on the provider
// newProvider returns for it, with jobs locked jobs due at tick.
func batonSchedulers(jobs, instances int, tick time.Time, claimed func(), newProvider func(i int) (lockprovider.Provider, func(), error)) (func(), error) {
	var stops []func()
	stop := func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	off := time.Duration(tick.UnixNano() % int64(time.Hour))
	for i := range instances {
		p, closeP, err := newProvider(i)
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, closeP)
		s, err := scheduler.New(p, &scheduler.Config{LockedBy: fmt.Sprintf("bench-%d", i), DisableRegistry: true})
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, func() { _ = s.Close() })
		for j := range jobs {
			_, err := s.Every(time.Hour, scheduler.Offset(off)).
				Locked(fmt.Sprintf("job-%05d", j), scheduler.AtMostFor(time.Minute)).
				Do(func(context.Context, scheduler.Run) error { claimed(); return nil })
			if err != nil {
				stop()
				return nil, err
			}
		}
		if err := s.Start(); err != nil {
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// warmNames claims and releases every job's name once for a tick an hour
// ago, so that the measured ticks find the records of jobs that ran
// before (rows on PostgreSQL, counters and ticks on Redis), as in a
// scheduler that has been running, rather than creating them.
func warmNames(ctx context.Context, p lockprovider.Provider, jobs int) error {
	ba, ok := p.(lockprovider.BatchAcquirer)
	if !ok {
		return nil
	}
	tick := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for lo := 0; lo < jobs; lo += lockprovider.MaxBatch {
		var ps []lockprovider.AcquireParams
		for j := lo; j < min(jobs, lo+lockprovider.MaxBatch); j++ {
			ps = append(ps, lockprovider.AcquireParams{Name: fmt.Sprintf("job-%05d", j), Owner: lockprovider.NewOwner(),
				LockedBy: "bench-warm", AtMostFor: time.Minute, Tick: tick})
		}
		res, err := ba.AcquireBatch(ctx, ps)
		if err != nil {
			return err
		}
		for i, r := range res {
			if r.Err != nil {
				return fmt.Errorf("warm-up claim of %s: %w", ps[i].Name, r.Err)
			}
			if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ps[i].Name, Owner: ps[i].Owner}); err != nil {
				return err
			}
		}
	}
	return nil
}

// batonRedis runs baton's instances on Redis clients of their own, on one
// key prefix per job count, which warm prepares.
func batonRedis(e *env) schedImpl {
	prefix := func(jobs int) string { return fmt.Sprintf("%ssched-baton-%d:", e.prefix, jobs) }
	newProvider := func(jobs int) (lockprovider.Provider, func(), error) {
		client := goredis.NewClient(e.redis.Options())
		p, err := redisprovider.New(client, &redisprovider.Config{Prefix: prefix(jobs), RecordTTL: time.Hour})
		if err != nil {
			_ = client.Close()
			return nil, nil, err
		}
		return p, func() { _ = client.Close() }, nil
	}
	return schedImpl{
		name: batonOn("Redis"),
		run: func(ctx context.Context, jobs, instances int, tick time.Time, claimed func(), released func(error)) (func(), error) {
			return batonSchedulers(jobs, instances, tick, claimed, func(int) (lockprovider.Provider, func(), error) {
				p, closeP, err := newProvider(jobs)
				if err != nil {
					return nil, nil, err
				}
				return counting(p, released), closeP, nil
			})
		},
		warm: func(ctx context.Context, jobs int) error {
			p, closeP, err := newProvider(jobs)
			if err != nil {
				return err
			}
			defer closeP()
			return warmNames(ctx, p, jobs)
		},
	}
}

// batonPostgres runs baton's instances on pools of their own (8
// connections each: with 4, a tick's 10,000 releases queued for a
// connection past the 5 s call timeout under load), on one table per job count, which warm creates and
// prepares.
func batonPostgres(pgURL, schema string) schedImpl {
	newProvider := func(ctx context.Context, jobs int) (*postgres.Provider, func(), error) {
		pcfg, err := pgxpool.ParseConfig(pgURL)
		if err != nil {
			return nil, nil, err
		}
		pcfg.MaxConns = 8
		pcfg.ConnConfig.RuntimeParams["search_path"] = schema
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, nil, err
		}
		p, err := postgres.New(pool, &postgres.Config{Schema: schema, Table: fmt.Sprintf("sched_%d", jobs)})
		if err != nil {
			pool.Close()
			return nil, nil, err
		}
		return p, pool.Close, nil
	}
	return schedImpl{
		name: batonOn("PostgreSQL"),
		run: func(ctx context.Context, jobs, instances int, tick time.Time, claimed func(), released func(error)) (func(), error) {
			return batonSchedulers(jobs, instances, tick, claimed, func(int) (lockprovider.Provider, func(), error) {
				p, closeP, err := newProvider(ctx, jobs)
				if err != nil {
					return nil, nil, err
				}
				return counting(p, released), closeP, nil
			})
		},
		warm: func(ctx context.Context, jobs int) error {
			p, closeP, err := newProvider(ctx, jobs)
			if err != nil {
				return err
			}
			defer closeP()
			if err := p.Migrate(ctx); err != nil {
				return err
			}
			return warmNames(ctx, p, jobs)
		},
	}
}

// gocronLocker is gocron's distributed locker on bsm/redislock.
type gocronLocker struct {
	client   *redislock.Client
	prefix   string
	released func(error)
}

type gocronLock struct {
	lock     *redislock.Lock
	released func(error)
}

func (l gocronLocker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	lock, err := l.client.Obtain(ctx, l.prefix+key, time.Minute, nil)
	if err != nil {
		return nil, err
	}
	return gocronLock{lock, l.released}, nil
}

func (k gocronLock) Unlock(ctx context.Context) error {
	err := k.lock.Release(ctx)
	k.released(err)
	return err
}

func gocronTick(e *env, round *atomic.Int64) tickRun {
	return func(ctx context.Context, jobs, instances int, tick time.Time, claimed func(), released func(error)) (func(), error) {
		prefix := fmt.Sprintf("%ssched-gocron-%d:", e.prefix, round.Add(1))
		var stops []func()
		stop := func() {
			for _, f := range slices.Backward(stops) {
				f()
			}
		}
		for range instances {
			client := goredis.NewClient(e.redis.Options())
			stops = append(stops, func() { _ = client.Close() })
			locker := gocronLocker{redislock.New(client), prefix, released}
			s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker), gocron.WithLogger(gocron.NewLogger(gocron.LogLevelError)))
			if err != nil {
				stop()
				return nil, err
			}
			stops = append(stops, func() { _ = s.Shutdown() })
			for i := range jobs {
				_, err := s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartDateTime(tick)),
					gocron.NewTask(claimed), gocron.WithName(fmt.Sprintf("job-%05d", i)))
				if err != nil {
					stop()
					return nil, err
				}
			}
			s.Start()
		}
		return stop, nil
	}
}

func measureTick(ctx context.Context, run tickRun, jobs, instances int) (tickSample, error) {
	lead := time.Second + time.Duration(jobs*instances)*150*time.Microsecond
	tick := time.Now().Add(lead).Truncate(time.Millisecond)
	var (
		mu     sync.Mutex
		last   time.Time
		claims int
		rel    atomic.Int64
		done   = make(chan struct{})
	)
	claimed := func() {
		now := time.Now()
		mu.Lock()
		claims++
		if now.After(last) {
			last = now
		}
		mu.Unlock()
	}
	var (
		relFailed  atomic.Int64
		relFailure atomic.Value
	)
	released := func(err error) {
		if err != nil && !errors.Is(err, batontype.ErrNotHeld) && !errors.Is(err, redislock.ErrLockNotHeld) {
			// The lease stays held until it expires: the next round
			// would find the name taken.
			relFailed.Add(1)
			relFailure.CompareAndSwap(nil, err.Error())
		}
		if rel.Add(1) == int64(jobs) {
			close(done)
		}
	}
	stop, err := run(ctx, jobs, instances, tick, claimed, released)
	if err != nil {
		return tickSample{}, err
	}
	defer stop()
	time.Sleep(time.Until(tick.Add(-20 * time.Millisecond)))
	c0 := cpuTime()
	select {
	case <-done:
	case <-time.After(time.Until(tick) + 30*time.Second):
		mu.Lock()
		n := claims
		mu.Unlock()
		return tickSample{}, fmt.Errorf("%d of %d locks released 30s after the tick (%d claims)", rel.Load(), jobs, n)
	case <-ctx.Done():
		return tickSample{}, ctx.Err()
	}
	cpu := cpuTime() - c0
	if n := relFailed.Load(); n > 0 {
		return tickSample{}, fmt.Errorf("%d releases failed, first: %v", n, relFailure.Load())
	}
	if instances > 1 {
		// Runs beyond one per job (a scheduler without tick identity)
		// come after the first release of their job: give them time.
		time.Sleep(200 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return tickSample{toLast: last.Sub(tick), cpu: cpu, claims: claims}, nil
}

// schedImpl is one scheduler on one backend.
type schedImpl struct {
	name string // e.g. "baton scheduler, Redis"
	run  tickRun
	// warm, if set, prepares the backend for jobs jobs before the first
	// measured tick.
	warm func(ctx context.Context, jobs int) error
}

// schedResult holds, per job count, implementation and number of
// instances, the ticks measured; the tick lateness and the idle CPU of
// baton with jobs registered.
type schedResult struct {
	jobs       []int
	impls      []string
	instances  []int
	ticks      map[string][]tickSample // key impl/jobs/instances
	lateness   map[int][]time.Duration // per job count: each tick's first claim attempt after the tick
	idleCPU    map[int]time.Duration   // per job count: process CPU over idleWindow
	idleWindow time.Duration
}

func schedKey(impl string, jobs, instances int) string {
	return fmt.Sprintf("%s/%d/%d", impl, jobs, instances)
}

func (r schedResult) median(impl string, jobs, instances int) (toLast, cpu time.Duration, extra int) {
	var a, b []float64
	for _, t := range r.ticks[schedKey(impl, jobs, instances)] {
		a = append(a, float64(t.toLast))
		b = append(b, float64(t.cpu))
		extra = max(extra, t.claims-jobs)
	}
	return time.Duration(median(a)), time.Duration(median(b)), extra
}

// batonOn is the name of baton's scheduler on backend.
func batonOn(backend string) string { return "baton scheduler, " + backend }

const gocronName = "gocron v2 + redislock, Redis"

func runScheduler(ctx context.Context, log *slog.Logger, e *env, pgURL string, rounds int, sizes []int) (schedResult, error) {
	var seq atomic.Int64
	schema := fmt.Sprintf("benchrun_sched_%d", os.Getpid())
	admin, err := pgxpool.New(ctx, pgURL)
	if err != nil {
		return schedResult{}, err
	}
	defer admin.Close()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
		return schedResult{}, fmt.Errorf("postgres at %s: %w", pgURL, err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE") //nolint:errcheck // best effort
	impls := []schedImpl{
		batonRedis(e),
		batonPostgres(pgURL, schema),
		{name: gocronName, run: gocronTick(e, &seq)},
	}
	res := schedResult{jobs: sizes, instances: []int{1, 3}, ticks: map[string][]tickSample{},
		lateness: map[int][]time.Duration{}, idleCPU: map[int]time.Duration{}, idleWindow: 10 * time.Second}
	for _, im := range impls {
		res.impls = append(res.impls, im.name)
	}
	for _, jobs := range sizes {
		for _, im := range impls {
			if im.warm != nil {
				if err := im.warm(ctx, jobs); err != nil {
					return res, fmt.Errorf("%s, %d jobs: warm-up: %w", im.name, jobs, err)
				}
			}
		}
		for _, inst := range res.instances {
			for r := range rounds {
				for i := range impls {
					im := impls[(i+r)%len(impls)]
					t, err := measureTick(ctx, im.run, jobs, inst)
					if err != nil {
						return res, fmt.Errorf("%s, %d jobs, %d instances: %w", im.name, jobs, inst, err)
					}
					if t.claims < jobs || (t.claims != jobs && im.name != gocronName) {
						return res, fmt.Errorf("%s, %d jobs, %d instances: %d claims", im.name, jobs, inst, t.claims)
					}
					k := schedKey(im.name, jobs, inst)
					res.ticks[k] = append(res.ticks[k], t)
				}
			}
			for _, im := range impls {
				l, c, x := res.median(im.name, jobs, inst)
				log.Info("measured", "comparison", "scheduler", "impl", im.name, "jobs", jobs, "instances", inst,
					"to_last_claim", l, "cpu", c, "extra_runs", x)
			}
		}
		late, err := tickLateness(ctx, e, jobs, 6)
		if err != nil {
			return res, fmt.Errorf("tick lateness, %d jobs: %w", jobs, err)
		}
		res.lateness[jobs] = late
		idle, err := idleCPU(ctx, e, jobs, res.idleWindow)
		if err != nil {
			return res, fmt.Errorf("idle CPU, %d jobs: %w", jobs, err)
		}
		res.idleCPU[jobs] = idle
		log.Info("measured", "comparison", "scheduler", "jobs", jobs, "tick_lateness", late, "idle_cpu", idle, "idle_window", res.idleWindow)
	}
	slices.Sort(res.jobs)
	return res, nil
}

// tickLateness runs baton's scheduler on Redis with jobs locked jobs every
// second for ticks ticks and returns, per tick, the time from the tick to
// the first claim attempt (the Attempt hook): how late the tick fired.
func tickLateness(ctx context.Context, e *env, jobs, ticks int) ([]time.Duration, error) {
	client := goredis.NewClient(e.redis.Options())
	defer client.Close()
	p, err := redisprovider.New(client, &redisprovider.Config{Prefix: e.prefix + "sched-late:", RecordTTL: time.Hour})
	if err != nil {
		return nil, err
	}
	var (
		mu    sync.Mutex
		first = map[time.Time]time.Time{}
	)
	s, err := scheduler.New(p, &scheduler.Config{LockedBy: "bench-late", DisableRegistry: true, Observer: scheduler.Hooks{
		Attempt: func(ev scheduler.Event) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if f, ok := first[ev.Tick]; !ok || now.Before(f) {
				first[ev.Tick] = now
			}
		},
	}})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for j := range jobs {
		_, err := s.Every(time.Second).Locked(fmt.Sprintf("late-%05d", j), scheduler.AtMostFor(10*time.Second)).
			Do(func(context.Context, scheduler.Run) error { return nil })
		if err != nil {
			return nil, err
		}
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	select {
	case <-time.After(time.Duration(ticks)*time.Second + 900*time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	_ = s.Close()
	mu.Lock()
	defer mu.Unlock()
	var out []time.Duration
	for tick, f := range first {
		out = append(out, f.Sub(tick))
	}
	if len(out) < ticks {
		return nil, fmt.Errorf("%d ticks fired, want %d", len(out), ticks)
	}
	slices.Sort(out)
	return out, nil
}

// idleCPU registers jobs locked jobs whose next tick lies an hour ahead,
// starts the scheduler (with its job registry on, as by default), and
// returns the process's CPU time over window once it has settled.
func idleCPU(ctx context.Context, e *env, jobs int, window time.Duration) (time.Duration, error) {
	client := goredis.NewClient(e.redis.Options())
	defer client.Close()
	p, err := redisprovider.New(client, &redisprovider.Config{Prefix: e.prefix + "sched-idle:", RecordTTL: time.Hour})
	if err != nil {
		return 0, err
	}
	s, err := scheduler.New(p, &scheduler.Config{LockedBy: "bench-idle"})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	off := time.Duration((time.Now().UnixNano() - int64(time.Minute)) % int64(time.Hour))
	for j := range jobs {
		_, err := s.Every(time.Hour, scheduler.Offset(off)).Locked(fmt.Sprintf("idle-%05d", j), scheduler.AtMostFor(time.Minute)).
			Do(func(context.Context, scheduler.Run) error { return nil })
		if err != nil {
			return 0, err
		}
	}
	if err := s.Start(); err != nil {
		return 0, err
	}
	time.Sleep(time.Second) // the first registry publication
	runtime.GC()
	c0 := cpuTime()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return cpuTime() - c0, nil
}

// Budgets of the scheduler at 10,000 jobs.
const (
	budgetJobs      = 10000
	budgetLateness  = 5 * time.Millisecond
	budgetContended = 2.0 // three instances ÷ one
)

// budgetToLast is the budget of the tick → last claim time of baton on
// backend (one instance, budgetJobs jobs).
func budgetToLast(impl string) time.Duration {
	switch impl {
	case batonOn("Redis"):
		return 100 * time.Millisecond
	case batonOn("PostgreSQL"):
		return 300 * time.Millisecond
	}
	return 0
}

// markdown renders the scheduler section.
func (r schedResult) markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Scheduler: locked jobs due at one tick\n\n")
	w("Every job is due at the same instant; \"to last claim\" is the time from that instant to the start of\n")
	w("the last job function (its lock acquired), CPU the whole process's CPU time from just before the tick\n")
	w("until every lock was released. With three instances, three schedulers (each on a client or pool of\n")
	w("its own, in this one process) register the same jobs and contend for every tick. baton claims the\n")
	w("jobs due together in batches (`lockprovider.BatchAcquirer`, at most %d names per call: one script\n", lockprovider.MaxBatch)
	w("call on Redis, one statement on PostgreSQL). gocron v2 takes its lock through a `gocron.Locker` on\n")
	w("bsm/redislock (one `Obtain` per job run, `Release` after it), on a Redis client of its own per\n")
	w("instance; \"extra runs\" counts job runs beyond one per job and tick (the most in any round).\n\n")
	w("| jobs | instances | scheduler | to last claim | CPU per tick | extra runs |\n|---:|---:|---|---:|---:|---:|\n")
	for _, j := range r.jobs {
		for _, n := range r.instances {
			for _, im := range r.impls {
				if len(r.ticks[schedKey(im, j, n)]) == 0 {
					continue
				}
				l, c, x := r.median(im, j, n)
				w("| %d | %d | %s | %s | %s | %d |\n", j, n, im, fmtDur(l), fmtDur(c), x)
			}
		}
	}
	w("\n")
	if len(r.lateness) > 0 {
		w("Tick lateness: baton's scheduler on Redis with the jobs due every second, for several ticks in a\n")
		w("row; lateness is the time from each tick to its first claim attempt (the `Attempt` hook), so it\n")
		w("includes the timer's wake-up and collecting the due jobs. Idle CPU: the jobs registered with their\n")
		w("next tick an hour ahead (job registry on, as by default), the process's CPU time over %s.\n\n", r.idleWindow)
		w("| jobs | ticks | lateness, median | lateness, max | idle CPU per %s |\n|---:|---:|---:|---:|---:|\n", r.idleWindow)
		for _, j := range r.jobs {
			late := r.lateness[j]
			if len(late) == 0 {
				continue
			}
			w("| %d | %d | %s | %s | %s |\n", j, len(late), fmtDur(late[len(late)/2]), fmtDur(slices.Max(late)), fmtDur(r.idleCPU[j]))
		}
		w("\n")
	}
	return b.String()
}

// budgets returns the budget lines of the scheduler and their count.
func (r schedResult) budgets() (string, int) {
	var b strings.Builder
	n := 0
	line := func(measure, budget, value string, ok bool) {
		verdict := "met"
		if !ok {
			verdict = "**missed**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | – | %s |\n", measure, budget, value, verdict)
		n++
	}
	has := func(im string, j, inst int) bool { return len(r.ticks[schedKey(im, j, inst)]) > 0 }
	for _, j := range r.jobs {
		for _, im := range r.impls {
			if bud := budgetToLast(im); bud > 0 && j == budgetJobs && has(im, j, 1) {
				l, _, _ := r.median(im, j, 1)
				line(fmt.Sprintf("Scheduler, %d jobs, %s: tick → last claim, one instance", j, im), "≤ "+fmtDur(bud), fmtDur(l), l <= bud)
			}
			if bud := budgetToLast(im); bud > 0 && j == budgetJobs && has(im, j, 1) && has(im, j, 3) {
				one, _, _ := r.median(im, j, 1)
				three, _, _ := r.median(im, j, 3)
				ratio := float64(three) / float64(one)
				line(fmt.Sprintf("Scheduler, %d jobs, %s: three instances ÷ one", j, im), fmt.Sprintf("≤ %.2f", budgetContended),
					fmt.Sprintf("%.2f (%s vs %s)", ratio, fmtDur(three), fmtDur(one)), ratio <= budgetContended)
			}
		}
		if has(batonOn("Redis"), j, 1) && has(gocronName, j, 1) {
			a, _, _ := r.median(batonOn("Redis"), j, 1)
			g, _, _ := r.median(gocronName, j, 1)
			line(fmt.Sprintf("Scheduler, %d jobs: tick → last claim, baton vs gocron (Redis)", j), "ahead", fmtDur(a)+" vs "+fmtDur(g), a < g)
		}
		if late := r.lateness[j]; j == budgetJobs && len(late) > 0 {
			m := slices.Max(late)
			line(fmt.Sprintf("Scheduler, %d jobs: tick lateness, worst of %d ticks", j, len(late)), "≤ "+fmtDur(budgetLateness), fmtDur(m), m <= budgetLateness)
		}
	}
	return b.String(), n
}
