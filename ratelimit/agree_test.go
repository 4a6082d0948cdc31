package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
)

// The scripted stores agree with the memory store, the reference
// implementation, decision by decision: each request goes to the store
// under test, then to a memory store whose clock is set to the server time
// the first reported. Every field of the results must match.
func TestStoresAgreeWithMemory(t *testing.T) {
	t.Parallel()
	limitSets := [][]lockprovider.RateLimit{
		{{Algorithm: lockprovider.FixedWindow, Limit: 5, Period: 40 * time.Millisecond}},
		{{Algorithm: lockprovider.SlidingLog, Limit: 6, Period: 50 * time.Millisecond}},
		{{Algorithm: lockprovider.SlidingWindow, Limit: 7, Period: 30 * time.Millisecond}},
		{{Algorithm: lockprovider.TokenBucket, Limit: 3, Period: 20 * time.Millisecond, Burst: 5}},
		{{Algorithm: lockprovider.GCRA, Limit: 7, Period: 30 * time.Millisecond, Burst: 4}},
		{
			{Algorithm: lockprovider.GCRA, Limit: 3, Period: 10 * time.Millisecond, Burst: 3},
			{Algorithm: lockprovider.TokenBucket, Limit: 9, Period: 70 * time.Millisecond, Burst: 6},
		},
		{
			{Algorithm: lockprovider.FixedWindow, Limit: 8, Period: 50 * time.Millisecond},
			{Algorithm: lockprovider.SlidingWindow, Limit: 5, Period: 20 * time.Millisecond},
			{Algorithm: lockprovider.SlidingLog, Limit: 6, Period: 30 * time.Millisecond},
			{Algorithm: lockprovider.GCRA, Limit: 11, Period: 30 * time.Millisecond, Burst: 5},
		},
	}
	for _, sc := range stores {
		if sc.name == "memory" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			store := sc.new(t)
			ctx := context.Background()
			for si, limits := range limitSets {
				clk := newFakeClock(epoch)
				ref := memoryAt(clk)
				reservable := true
				capacity := int64(1 << 62)
				for _, l := range limits {
					reservable = reservable && l.Algorithm.Reservable()
					capacity = min(capacity, l.Capacity())
				}
				rng := rand.New(rand.NewPCG(uint64(si), 7))
				key := "agree-" + testenv.Unique()
				var admitted, refused, delayed int
				for step := range 300 {
					req := lockprovider.RateRequest{Key: key, N: rng.Int64N(capacity + 1), Limits: limits}
					if reservable {
						switch rng.IntN(6) {
						case 0:
							req.MaxDelay = time.Duration(rng.IntN(40_000)) * time.Microsecond
						case 1:
							req.Refund = true
						}
					}
					got, err := store.RateLimit(ctx, req)
					if err != nil {
						t.Fatalf("set %d step %d: %v", si, step, err)
					}
					clk.mu.Lock()
					clk.t = got.Now
					clk.mu.Unlock()
					want, err := ref.RateLimit(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("set %d step %d, request %+v:\n got %+v\nwant %+v (memory at the same server time)", si, step, req, got, want)
					}
					switch {
					case got.Allowed && got.Delay > 0:
						delayed++
					case got.Allowed:
						admitted++
					default:
						refused++
					}
					if rng.IntN(3) == 0 {
						time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
					}
				}
				if admitted < 20 || refused < 20 || (reservable && delayed < 5) {
					t.Errorf("set %d: %d admitted, %d refused, %d reserved ahead: the sequence did not exercise the limits", si, admitted, refused, delayed)
				}
			}
		})
	}
}
