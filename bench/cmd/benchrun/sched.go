package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-co-op/gocron/v2"

	"github.com/baton-go/baton/lockprovider"
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

// tickRun registers jobs locked jobs due once at tick, starts the
// scheduler and returns a function that stops it.
type tickRun func(ctx context.Context, jobs int, tick time.Time, claimed func(), released func()) (stop func(), err error)

// countingProvider counts releases, so the measurement can end when the
// last lock is given back.
type countingProvider struct {
	lockprovider.Provider
	released func()
}

func (c countingProvider) Release(ctx context.Context, p lockprovider.ReleaseParams) error {
	err := c.Provider.Release(ctx, p)
	c.released()
	return err
}

func batonTick(e *env, round *atomic.Int64) tickRun {
	return func(ctx context.Context, jobs int, tick time.Time, claimed, released func()) (func(), error) {
		p, err := redisprovider.New(e.redis, &redisprovider.Config{
			Prefix: fmt.Sprintf("%ssched-baton-%d:", e.prefix, round.Add(1)), RecordTTL: time.Hour,
		})
		if err != nil {
			return nil, err
		}
		s, err := scheduler.New(countingProvider{p, released}, &scheduler.Config{LockedBy: "bench"})
		if err != nil {
			return nil, err
		}
		off := time.Duration(tick.UnixNano() % int64(time.Hour))
		for i := range jobs {
			_, err := s.Every(time.Hour, scheduler.Offset(off)).
				Locked(fmt.Sprintf("job-%05d", i), scheduler.AtMostFor(time.Minute)).
				Do(func(context.Context, scheduler.Run) error { claimed(); return nil })
			if err != nil {
				return nil, err
			}
		}
		if err := s.Start(); err != nil {
			return nil, err
		}
		return func() { _ = s.Close() }, nil
	}
}

// gocronLocker is gocron's distributed locker on bsm/redislock.
type gocronLocker struct {
	client   *redislock.Client
	prefix   string
	released func()
}

type gocronLock struct {
	lock     *redislock.Lock
	released func()
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
	k.released()
	return err
}

func gocronTick(e *env, round *atomic.Int64) tickRun {
	return func(ctx context.Context, jobs int, tick time.Time, claimed, released func()) (func(), error) {
		locker := gocronLocker{redislock.New(e.redis), fmt.Sprintf("%ssched-gocron-%d:", e.prefix, round.Add(1)), released}
		s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker), gocron.WithLogger(gocron.NewLogger(gocron.LogLevelError)))
		if err != nil {
			return nil, err
		}
		for i := range jobs {
			_, err := s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartDateTime(tick)),
				gocron.NewTask(claimed), gocron.WithName(fmt.Sprintf("job-%05d", i)))
			if err != nil {
				return nil, err
			}
		}
		s.Start()
		return func() { _ = s.Shutdown() }, nil
	}
}

func measureTick(ctx context.Context, run tickRun, jobs int) (tickSample, error) {
	lead := time.Second + time.Duration(jobs)*150*time.Microsecond
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
	released := func() {
		if rel.Add(1) == int64(jobs) {
			close(done)
		}
	}
	stop, err := run(ctx, jobs, tick, claimed, released)
	if err != nil {
		return tickSample{}, err
	}
	defer stop()
	time.Sleep(time.Until(tick.Add(-20 * time.Millisecond)))
	c0 := cpuTime()
	select {
	case <-done:
	case <-time.After(time.Until(tick) + 30*time.Second):
		return tickSample{}, fmt.Errorf("%d of %d locks released 30s after the tick", rel.Load(), jobs)
	case <-ctx.Done():
		return tickSample{}, ctx.Err()
	}
	cpu := cpuTime() - c0
	mu.Lock()
	defer mu.Unlock()
	return tickSample{toLast: last.Sub(tick), cpu: cpu, claims: claims}, nil
}

// schedResult holds, per job count and implementation, the ticks measured.
type schedResult struct {
	jobs  []int
	impls []string
	ticks map[string][]tickSample // key impl/jobs
}

func (r schedResult) median(impl string, jobs int) (toLast, cpu time.Duration) {
	var a, b []float64
	for _, t := range r.ticks[fmt.Sprintf("%s/%d", impl, jobs)] {
		a = append(a, float64(t.toLast))
		b = append(b, float64(t.cpu))
	}
	return time.Duration(median(a)), time.Duration(median(b))
}

func runScheduler(ctx context.Context, log *slog.Logger, e *env, rounds int, sizes []int) (schedResult, error) {
	var seq atomic.Int64
	impls := []struct {
		name string
		run  tickRun
	}{{"baton scheduler", batonTick(e, &seq)}, {"gocron v2 + redislock", gocronTick(e, &seq)}}
	res := schedResult{jobs: sizes, ticks: map[string][]tickSample{}}
	for _, im := range impls {
		res.impls = append(res.impls, im.name)
	}
	for _, jobs := range sizes {
		for r := range rounds {
			for i := range impls {
				im := impls[(i+r)%len(impls)]
				t, err := measureTick(ctx, im.run, jobs)
				if err != nil {
					return res, fmt.Errorf("%s, %d jobs: %w", im.name, jobs, err)
				}
				if t.claims != jobs {
					return res, fmt.Errorf("%s, %d jobs: %d claims", im.name, jobs, t.claims)
				}
				k := fmt.Sprintf("%s/%d", im.name, jobs)
				res.ticks[k] = append(res.ticks[k], t)
			}
		}
		for _, im := range impls {
			l, c := res.median(im.name, jobs)
			log.Info("measured", "comparison", "scheduler", "impl", im.name, "jobs", jobs, "to_last_claim", l, "cpu", c)
		}
	}
	slices.Sort(res.jobs)
	return res, nil
}
