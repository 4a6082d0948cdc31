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
