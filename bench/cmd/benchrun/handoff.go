package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/baton-go/baton"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

const waiters = 16

// holdFor is how long each holder keeps the lock.
const holdFor = 2 * time.Millisecond

// handoffImpl makes waiters contend for one name: acquire (waiting as the
// implementation waits), release at once, again.
type handoffImpl struct {
	name string
	// start returns one waiter's acquire and the release of what it got.
	start func(w int) (acquire func(ctx context.Context) (release func(ctx context.Context) error, err error))
}

// runHandoff runs the waiters for d and returns the hand-off latencies:
// from the start of one holder's release to the next grant.
func runHandoff(ctx context.Context, h handoffImpl, d time.Duration) sample {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		released atomic.Int64 // UnixNano of the last release's start; 0 none
		grants   atomic.Int64 // grants so far
		mu       sync.Mutex
		lat      []time.Duration
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	runtimeStart := time.Now()
	for w := range waiters {
		acquire := h.start(w)
		wg.Go(func() {
			for ctx.Err() == nil {
				release, err := acquire(ctx)
				if err != nil {
					if dl, _ := ctx.Deadline(); time.Until(dl) < 100*time.Millisecond {
						return // the run is ending
					}
					if ctx.Err() == nil {
						mu.Lock()
						errs++
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
					}
					continue
				}
				now := time.Now().UnixNano()
				gen := grants.Add(1)
				if r := released.Swap(0); r != 0 {
					mu.Lock()
					lat = append(lat, time.Duration(now-r))
					mu.Unlock()
				}
				// Hold briefly, as a holder works: the others are parked
				// in their wait by then.
				time.Sleep(holdFor)
				released.Store(time.Now().UnixNano())
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
				if err := release(rctx); err != nil {
					released.Store(0)
				}
				rcancel()
				// Step back until another waiter has taken the lock: a
				// holder that tries again at once would mostly win it
				// back from waiters asleep in their retry delay, and
				// that is no hand-off.
				for grants.Load() == gen && ctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return sample{ops: len(lat), elapsed: time.Since(runtimeStart), lat: lat, errs: errs, firstErr: firstErr}
}

func handoffImpls(e *env) ([]handoffImpl, error) {
	// One provider and Locker per waiter, as if each were a process of
	// its own (each with its release subscription).
	lockers := make([]*baton.Locker, waiters)
	for w := range lockers {
		p, err := redisprovider.New(e.redis, &redisprovider.Config{Prefix: e.prefix + "handoff-baton:", RecordTTL: time.Hour})
		if err != nil {
			return nil, err
		}
		if lockers[w], err = baton.NewLocker(p, &baton.Config{LockedBy: "bench", AtMostFor: leaseLen}); err != nil {
			return nil, err
		}
	}
	rl := redislock.New(e.redis)
	rs := redsync.New(redsyncgoredis.NewPool(e.redis))
	const name = "handoff"
	return []handoffImpl{
		{"baton Locker", func(w int) func(context.Context) (func(context.Context) error, error) {
			return func(ctx context.Context) (func(context.Context) error, error) {
				l, err := lockers[w].Acquire(ctx, name, nil)
				if err != nil {
					return nil, err
				}
				return l.Release, nil
			}
		}},
		{"redislock", func(int) func(context.Context) (func(context.Context) error, error) {
			// The retry strategy of redislock's documentation.
			opts := &redislock.Options{RetryStrategy: redislock.LinearBackoff(100 * time.Millisecond)}
			return func(ctx context.Context) (func(context.Context) error, error) {
				l, err := rl.Obtain(ctx, e.prefix+"handoff-redislock", leaseLen, opts)
				if err != nil {
					return nil, err
				}
				return l.Release, nil
			}
		}},
		{"redsync", func(int) func(context.Context) (func(context.Context) error, error) {
			return func(ctx context.Context) (func(context.Context) error, error) {
				// redsync's default retry delay: random, 50 to 250 ms.
				m := rs.NewMutex(e.prefix+"handoff-redsync", redsync.WithExpiry(leaseLen), redsync.WithTries(1<<20))
				if err := m.LockContext(ctx); err != nil {
					return nil, err
				}
				return func(ctx context.Context) error {
					ok, err := m.UnlockContext(ctx)
					if err == nil && !ok {
						err = errLost
					}
					return err
				}, nil
			}
		}},
	}, nil
}

// runHandoffs is the hand-off comparison on Redis.
func runHandoffs(ctx context.Context, log *slog.Logger, e *env, rounds int, d time.Duration) (result, error) {
	impls, err := handoffImpls(e)
	if err != nil {
		return result{}, err
	}
	c := comparison{
		id:    "handoff-redis",
		title: "Contended hand-off on Redis (one name, 16 waiters)",
		note: "16 waiters, each with a client of its own, contend for one name; each holder keeps it 2 ms, releases, and waits for another waiter to take it before it tries again. " +
			"Latency is from the start of one holder's release to the next grant; ops/s counts hand-offs. baton waiters are woken by " +
			"the release announcement; redislock retries every 100 ms (its documented strategy), redsync " +
			"after a random 50–250 ms (its default).",
		ratios: []ratio{{"baton Locker", "redislock", 0}, {"baton Locker", "redsync", 0}},
	}
	return runHandoffCmp(ctx, log, c, impls, rounds, d)
}

// runHandoffCmp measures the hand-off contenders impls in rounds, as one
// cell at concurrency = waiters.
func runHandoffCmp(ctx context.Context, log *slog.Logger, c comparison, impls []handoffImpl, rounds int, d time.Duration) (result, error) {
	c.concs = []int{waiters}
	for _, h := range impls {
		c.contenders = append(c.contenders, contender{name: h.name})
	}
	cl := cell{conc: waiters, samples: make([][]sample, len(impls))}
	for r := range rounds {
		for i := range impls {
			k := (i + r) % len(impls)
			s := runHandoff(ctx, impls[k], d)
			if s.ops == 0 {
				// A poller can miss every hand-off of a short round on a
				// loaded machine; the round counts as none.
				log.Warn("no hand-off in the round", "comparison", c.id, "contender", impls[k].name, "first error", s.firstErr)
			} else if s.firstErr != nil {
				log.Warn("hand-off errors", "comparison", c.id, "contender", impls[k].name, "errors", s.errs, "first", s.firstErr)
			}
			cl.samples[k] = append(cl.samples[k], s)
		}
		if err := ctx.Err(); err != nil {
			return result{}, err
		}
	}
	log.Info("measured", "comparison", c.id, "summary", cl.summary(c))
	return result{cmp: c, cells: []cell{cl}}, nil
}

// isHandoff reports whether the comparison id is a hand-off comparison
// (latencies, one cell, no allocation or CPU figures).
func isHandoff(id string) bool { return strings.HasPrefix(id, "handoff-") }

// handoffChart is the file name of a hand-off comparison's latency chart.
func handoffChart(id string) string {
	if id == "handoff-redis" {
		return "handoff-latency.svg"
	}
	return id + "-latency.svg"
}
