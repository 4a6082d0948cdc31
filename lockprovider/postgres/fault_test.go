package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// Replicas whose clocks differ by about a period claim different ticks at
// the same moment: one claims the tick that already ran (stale), another
// the new one. The stale claim must not make the new one fail: the name is
// free and the new tick was never granted, so it must be granted every
// time. Each round races the two claims on their own connections.
func TestFaultStaleTickRace(t *testing.T) {
	t.Parallel()
	const rounds = 300
	p, _ := newProvider(t, nil)
	ctx := t.Context()
	old := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	next := old.Add(time.Second)
	var lost int
	var reasons = map[string]int{}
	for i := range rounds {
		name := fmt.Sprintf("race-%d", i)
		first := params(name, time.Minute)
		first.Tick = old
		if _, err := p.Acquire(ctx, first); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: first.Owner}); err != nil {
			t.Fatal(err)
		}
		stale, fresh := params(name, time.Minute), params(name, time.Minute)
		stale.Tick, fresh.Tick = old, next
		var (
			wg               sync.WaitGroup
			start            = make(chan struct{})
			staleErr, newErr error
			newLease         lockprovider.Lease
		)
		wg.Add(2)
		go func() { defer wg.Done(); <-start; _, staleErr = p.Acquire(ctx, stale) }()
		go func() { defer wg.Done(); <-start; newLease, newErr = p.Acquire(ctx, fresh) }()
		close(start)
		wg.Wait()
		// The stale claim is refused: as stale, or as held when the new
		// claim got there first.
		if !errors.Is(staleErr, lockprovider.ErrStaleTick) && !errors.Is(staleErr, lockprovider.ErrNotAcquired) {
			t.Errorf("round %d: stale claim: %v; want ErrStaleTick or ErrNotAcquired", i, staleErr)
		}
		if newErr != nil {
			lost++
			reasons[newErr.Error()]++
			continue
		}
		if !newLease.Tick.Equal(next) {
			t.Errorf("round %d: granted tick %v; want %v", i, newLease.Tick, next)
		}
	}
	t.Logf("%d rounds: the new tick was refused in %d (%v)", rounds, lost, reasons)
	if lost != 0 {
		t.Errorf("the new tick was lost in %d of %d rounds; want 0", lost, rounds)
	}
}
