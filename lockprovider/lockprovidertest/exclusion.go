package lockprovidertest

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func exclusionCases() []testCase {
	return []testCase{
		{"OneWinnerOf100", testOneWinner},
		{"Counter", func(e *env) { e.fuzz(8, 2, 100, 0) }},
		{"CounterWithAtLeastFor", func(e *env) { e.fuzz(4, 1, 10, 5*time.Millisecond) }},
	}
}

// 100 goroutines race to acquire one free name: exactly one wins, the rest
// get ErrNotAcquired.
func testOneWinner(e *env) {
	const n = 100
	name := e.name()
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		winners atomic.Int32
		winner  atomic.Value
	)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			owner := lockprovider.NewOwner()
			<-start
			_, err := e.acquire(name, owner, long, 0)
			if err == nil {
				winners.Add(1)
				winner.Store(owner)
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	if got := winners.Load(); got != 1 {
		e.t.Fatalf("%d of %d racing Acquires won, want exactly 1", got, n)
	}
	for i, err := range errs {
		if err != nil && !errors.Is(err, batontype.ErrNotAcquired) {
			e.t.Errorf("racer %d: error %v, want nil or ErrNotAcquired", i, err)
		}
	}
	e.mustRelease(name, winner.Load().(string))
}

// fuzz: workers goroutines spread over names names each complete iters
// read-sleep-write increments of a counter that only the lease protects.
// Lost updates, overlapping holders or non-increasing fences mean mutual
// exclusion failed. The counter is read and written with atomics only so the
// race detector, which cannot see the backend's ordering, stays quiet; the
// read-sleep-write is still unprotected.
func (e *env) fuzz(workers, names, iters int, atLeast time.Duration) {
	type guarded struct {
		name      string
		counter   atomic.Int64
		inside    atomic.Int32
		lastFence atomic.Int64
	}
	gs := make([]*guarded, names)
	for i := range gs {
		gs[i] = &guarded{name: e.name()}
	}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		g := gs[w%names]
		wg.Go(func() {
			for done := 0; done < iters; {
				if ctx.Err() != nil {
					e.t.Errorf("worker %d: gave up after %d of %d increments: %v", w, done, iters, ctx.Err())
					return
				}
				owner := lockprovider.NewOwner()
				l, err := e.p.Acquire(ctx, lockprovider.AcquireParams{
					Name: g.name, Owner: owner, AtMostFor: long, AtLeastFor: atLeast,
				})
				if errors.Is(err, batontype.ErrNotAcquired) {
					time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Microsecond) // a contender's back-off, part of the workload
					continue
				}
				if err != nil {
					e.t.Errorf("worker %d: Acquire: %v", w, err)
					return
				}
				if g.inside.Add(1) != 1 {
					e.t.Errorf("worker %d: another holder is inside the lease on %q", w, g.name)
				}
				if prev := g.lastFence.Swap(l.Token); l.Token <= prev {
					e.t.Errorf("worker %d: Token %d not above the previous holder's %d", w, l.Token, prev)
				}
				v := g.counter.Load()
				time.Sleep(200 * time.Microsecond) // widen the read-modify-write window a second holder would race into
				g.counter.Store(v + 1)
				g.inside.Add(-1)
				if err := e.p.Release(ctx, lockprovider.ReleaseParams{Name: g.name, Owner: owner}); err != nil {
					e.t.Errorf("worker %d: Release: %v", w, err)
					return
				}
				done++
			}
		})
	}
	wg.Wait()
	for i, g := range gs {
		want := int64(workers / names * iters)
		if i < workers%names {
			want += int64(iters)
		}
		if got := g.counter.Load(); got != want {
			e.t.Errorf("counter of %q = %d, want %d: mutual exclusion failed", g.name, got, want)
		}
	}
}
