package ratelimittest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/ratelimit"
)

// Two replicas whose application clocks are 26 years apart share one limit
// exactly: one runs inside a synctest bubble, where time.Now is
// 2000-01-01, the other on the real clock. Only the provider's clock (here a
// memory provider pinned to 2026) decides; a lockprovider.RateRequest carries
// no time at all.
func TestAppClockPlaysNoRole(t *testing.T) {
	t.Parallel()
	server := newFakeClock(epoch)
	provider := memoryAt(t, server)
	limit := ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 10, Period: time.Second, Burst: 5}
	inBubble := mustNew(t, provider, limit)
	outside := mustNew(t, provider, limit)
	ctx := context.Background()

	admitted := 0
	for range 3 {
		synctest.Test(t, func(t *testing.T) {
			if y := time.Now().Year(); y != 2000 {
				t.Fatalf("bubble clock says %d", y)
			}
			for range 2 {
				res := allow(t, inBubble, "shared", 1)
				if !res.ServerTime.Equal(server.Now()) {
					t.Errorf("ServerTime %v; want the provider's %v", res.ServerTime, server.Now())
				}
				if res.Allowed {
					admitted++
				}
			}
		})
		for range 2 {
			if allow(t, outside, "shared", 1).Allowed {
				admitted++
			}
		}
	}
	if admitted != 5 {
		t.Fatalf("admitted %d of 12 across the two clocks; want exactly the burst of 5", admitted)
	}

	// Wait books slots in the provider's queue whatever the caller's clock:
	// the bubble's Wait gets the slot 100ms after the burst, and the real
	// one the slot after that.
	synctest.Test(t, func(t *testing.T) {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		start := time.Now()
		if err := inBubble.Wait(dctx, "shared"); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != 100*time.Millisecond {
			t.Errorf("bubble waited %v; want the provider's 100ms", el)
		}
	})
	res := allow(t, outside, "shared", 0)
	if res.ResetAfter != 600*time.Millisecond {
		t.Errorf("queue reaches %v ahead of the provider's clock; want 600ms (5 burst + 1 booked)", res.ResetAfter)
	}
}
