package baton_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/memory"
)

// Waiters in Acquire on one name, on the fake clock of a synctest bubble:
// each gets the lock exactly once, never two at a time, and after each
// release the next grant comes within MaxBackoff (the longest wait between
// polls) when polling, at once with release notifications.
func TestWaiters(t *testing.T) {
	for _, notify := range []bool{true, false} {
		for _, seed := range testenv.Seeds(t, 40) {
			t.Run(fmt.Sprintf("notify=%t/%d", notify, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { testWaiters(t, notify, seed) })
			})
		}
	}
}

func testWaiters(t *testing.T, notify bool, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	p, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	maxB := time.Duration(10+rng.IntN(500)) * time.Millisecond
	l, err := baton.NewLocker(p, &baton.Config{DisableNotify: !notify, MinBackoff: maxB / 10, MaxBackoff: maxB})
	if err != nil {
		t.Fatal(err)
	}
	n := 2 + rng.IntN(8)
	holds := make([]time.Duration, n)
	for i := range holds {
		holds[i] = time.Duration(rng.Int64N(int64(time.Second)))
	}
	var (
		mu      sync.Mutex
		holding int
		got     = make(map[int]int)
		events  []time.Time // alternating grant, release times
	)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			lock, err := l.Acquire(context.Background(), "w", &baton.AcquireOptions{AtMostFor: time.Hour})
			if err != nil {
				t.Errorf("SEED=%d waiter %d: %v", seed, i, err)
				return
			}
			mu.Lock()
			holding++
			got[i]++
			if holding > 1 {
				t.Errorf("SEED=%d: %d holders at once", seed, holding)
			}
			events = append(events, time.Now())
			mu.Unlock()
			time.Sleep(holds[i])
			mu.Lock()
			holding--
			events = append(events, time.Now())
			mu.Unlock()
			if err := lock.Release(context.Background()); err != nil {
				t.Errorf("SEED=%d waiter %d: Release: %v", seed, i, err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		if got[i] != 1 {
			t.Errorf("SEED=%d: waiter %d got the lock %d times", seed, i, got[i])
		}
	}
	bound := maxB
	if notify {
		bound = 0
	}
	for k := 1; k+1 < len(events); k += 2 {
		if gap := events[k+1].Sub(events[k]); gap > bound {
			t.Errorf("SEED=%d (MaxBackoff %v, notify %t): next grant %v after a release, want at most %v", seed, maxB, notify, gap, bound)
		}
	}
}
