package schedulertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/scheduler"
)

// Several schedulers on one memory provider, on the fake clock of a
// synctest bubble, with a random period, job length and number of
// instances: every tick runs exactly once across them, each with a larger
// token than the tick before, and no tick between the first and the last
// is left out.
func TestSeededTicksRunOnce(t *testing.T) {
	for _, seed := range testenv.Seeds(t, 50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testTicksRunOnce(t, seed) })
		})
	}
}

func testTicksRunOnce(t *testing.T, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	period := time.Duration(1+rng.IntN(60)) * time.Second
	work := time.Duration(rng.Int64N(int64(period / 2)))
	n := 2 + rng.IntN(4)
	p := newMemory(t, nil)
	var (
		mu   sync.Mutex
		ran  = map[time.Time]int{}
		toks = map[time.Time]int64{}
	)
	for i := range n {
		s := newSched(t, p, &scheduler.Config{DisableRegistry: true, LockedBy: fmt.Sprintf("i%d", i)})
		must(s.Every(period).Locked("tick", scheduler.AtMostFor(period)).Do(func(ctx context.Context, run scheduler.Run) error {
			mu.Lock()
			ran[run.Tick]++
			toks[run.Tick] = run.Token
			mu.Unlock()
			time.Sleep(work)
			return nil
		}))
		start(t, s)
	}
	ticks := 3 + rng.IntN(20)
	time.Sleep(time.Duration(ticks)*period + period/2)
	synctest.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(ran) < ticks-1 {
		t.Errorf("SEED=%d (period %v, %d instances): %d ticks ran in %d periods", seed, period, n, len(ran), ticks)
	}
	var first, last time.Time
	for tick, c := range ran {
		if c != 1 {
			t.Errorf("SEED=%d (period %v, %d instances): tick %v ran %d times", seed, period, n, tick, c)
		}
		if first.IsZero() || tick.Before(first) {
			first = tick
		}
		if tick.After(last) {
			last = tick
		}
	}
	var prev int64
	for tick := first; !tick.After(last); tick = tick.Add(period) {
		tok, ok := toks[tick]
		if !ok {
			t.Errorf("SEED=%d (period %v): tick %v between %v and %v did not run", seed, period, tick, first, last)
			continue
		}
		if tok <= prev {
			t.Errorf("SEED=%d: tick %v has token %d after %d", seed, tick, tok, prev)
		}
		prev = tok
	}
}

// Retries and jitter on the fake clock, across seeds: replicas on one
// memory provider run a locked job with Jitter and Retry (a lease shorter
// than the retry chain, so the retries' extensions carry it), and the job
// fails a number of times drawn from each tick. Every tick runs on one
// replica, its first call at the tick plus JitterOf, each retry after the
// previous call's end plus the doubling backoff, all under one token, up
// to the allowed attempts; tokens grow across ticks, no tick between the
// first and the last is left out, and no lease is lost.
func TestSeededRetryJitter(t *testing.T) {
	for _, seed := range testenv.Seeds(t, 40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testRetryJitter(t, seed) })
		})
	}
}

type call struct {
	replica    int
	run        scheduler.Run
	start, end time.Time
}

func testRetryJitter(t *testing.T, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	period := time.Duration(10+rng.IntN(110)) * time.Second
	retries := 1 + rng.IntN(3)
	quarter := period / 4
	jitter := 1 + time.Duration(rng.Int64N(int64(quarter)))
	// The calls and the waits between them fit in the rest of the period:
	// (1+retries) calls of work, waits of backoff·(2^retries − 1).
	work := time.Duration(rng.Int64N(int64(quarter) / int64(1+retries)))
	backoff := time.Duration(rng.Int64N(int64(quarter) / int64(1<<retries-1)))
	atMostFor := 2*work + time.Second + time.Duration(rng.Int64N(int64(period/2)))
	n := 1 + rng.IntN(3)
	desc := fmt.Sprintf("SEED=%d (period %v, jitter %v, %d retries every %v, work %v, lease %v, %d replicas)",
		seed, period, jitter, retries, backoff, work, atMostFor, n)
	failures := func(tick time.Time) int {
		return int((uint64(tick.Unix())*2654435761 + uint64(seed)) >> 7 % uint64(retries+2))
	}

	p := newMemory(t, nil)
	var (
		mu    sync.Mutex
		calls []call
	)
	rec := &recorder{}
	var scheds []*scheduler.Scheduler
	for i := range n {
		s := newSched(t, p, &scheduler.Config{DisableRegistry: true, LockedBy: fmt.Sprintf("r%d", i), Observer: rec.hooks()})
		must(s.Every(period).Locked("job", scheduler.AtMostFor(atMostFor)).Jitter(jitter).Retry(retries, backoff).
			Do(func(ctx context.Context, run scheduler.Run) error {
				c := call{replica: i, run: run, start: time.Now()}
				time.Sleep(work)
				c.end = time.Now()
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
				if err := run.Check(); err != nil {
					t.Errorf("%s: tick %v attempt %d: the lease is not trusted: %v", desc, run.Tick, run.Attempt, err)
				}
				if run.Attempt <= failures(run.Tick) {
					return fmt.Errorf("failure %d", run.Attempt)
				}
				return nil
			}))
		start(t, s)
		scheds = append(scheds, s)
	}
	ticks := 3 + rng.IntN(10)
	time.Sleep(time.Duration(ticks)*period + period/2)
	for _, s := range scheds {
		// Shutdown waits for a running chain of retries.
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	byTick := map[time.Time][]call{}
	for _, c := range calls {
		byTick[c.run.Tick] = append(byTick[c.run.Tick], c)
	}
	if len(byTick) < ticks-1 {
		t.Errorf("%s: %d ticks ran in %d periods", desc, len(byTick), ticks)
	}
	var first, last time.Time
	for tick, cs := range byTick {
		if first.IsZero() || tick.Before(first) {
			first = tick
		}
		if tick.After(last) {
			last = tick
		}
		if want := min(failures(tick)+1, retries+1); len(cs) != want {
			t.Errorf("%s: tick %v: %d calls, want %d", desc, tick, len(cs), want)
		}
		at := tick.Add(scheduler.JitterOf("job", tick, jitter))
		wait := backoff
		for k, c := range cs {
			switch {
			case c.replica != cs[0].replica || c.run.Token != cs[0].run.Token:
				t.Errorf("%s: tick %v attempt %d on replica %d with token %d, the first on replica %d with token %d",
					desc, tick, c.run.Attempt, c.replica, c.run.Token, cs[0].replica, cs[0].run.Token)
			case c.run.Attempt != k+1:
				t.Errorf("%s: tick %v: call %d is attempt %d", desc, tick, k+1, c.run.Attempt)
			case !c.start.Equal(at):
				t.Errorf("%s: tick %v attempt %d began at %v, want %v", desc, tick, c.run.Attempt, c.start, at)
			}
			if k > 0 {
				wait *= 2
			}
			at = c.end.Add(wait)
		}
	}
	var prev int64
	for tick := first; !tick.After(last); tick = tick.Add(period) {
		cs, ok := byTick[tick]
		if !ok {
			t.Errorf("%s: tick %v between %v and %v did not run", desc, tick, first, last)
			continue
		}
		if tok := cs[0].run.Token; tok <= prev {
			t.Errorf("%s: tick %v has token %d after %d", desc, tick, tok, prev)
		}
		prev = cs[0].run.Token
	}
	if lost := rec.get("lost"); len(lost) != 0 {
		t.Errorf("%s: %d leases lost, the first %+v", desc, len(lost), lost[0])
	}
}
