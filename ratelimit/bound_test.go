package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/ratelimit"
)

// Random single-unit requests on the fake clock of a synctest bubble, on
// the memory provider, and the documented bound of each algorithm checked
// over every span of the admitted times: TokenBucket and GCRA admit at
// most B + L·t/W in any span t; SlidingLog at most L in any span shorter
// than W; FixedWindow at most L per aligned window.
func TestRateBounds(t *testing.T) {
	for _, alg := range []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.GCRA, ratelimit.SlidingLog, ratelimit.FixedWindow} {
		for _, seed := range testenv.Seeds(t, 50) {
			t.Run(fmt.Sprintf("%v/%d", alg, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { testRateBound(t, alg, seed) })
			})
		}
	}
}

func testRateBound(t *testing.T, alg ratelimit.Algorithm, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	p, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.Limit{Algorithm: alg, Rate: 1 + rng.Int64N(20), Period: time.Duration(1+rng.Int64N(1000)) * time.Millisecond}
	if alg == ratelimit.TokenBucket || alg == ratelimit.GCRA {
		lim.Burst = rng.Int64N(2 * lim.Rate)
	}
	l, err := ratelimit.New(p, []ratelimit.Limit{lim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var at []time.Time // admission times, in order
	mean := lim.Period / time.Duration(lim.Rate)
	for range 400 {
		time.Sleep(time.Duration(rng.Int64N(int64(2*mean) + 1)))
		r, err := l.Allow(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if r.Allowed {
			at = append(at, time.Now())
		}
	}
	if len(at) == 0 {
		t.Fatalf("SEED=%d %+v: nothing admitted", seed, lim)
	}
	burst := lim.Burst
	if burst == 0 {
		burst = lim.Rate
	}
	for i := range at {
		for j := i; j < len(at); j++ {
			n, span := int64(j-i+1), at[j].Sub(at[i])
			switch alg {
			case ratelimit.TokenBucket, ratelimit.GCRA:
				// n ≤ B + L·span/W, in integers: n·W ≤ B·W + L·span.
				if n*int64(lim.Period) > burst*int64(lim.Period)+lim.Rate*int64(span) {
					t.Fatalf("SEED=%d %+v: %d admitted in %v", seed, lim, n, span)
				}
			case ratelimit.SlidingLog:
				if span < lim.Period && n > lim.Rate {
					t.Fatalf("SEED=%d %+v: %d admitted in %v", seed, lim, n, span)
				}
			case ratelimit.FixedWindow:
				if at[i].UnixNano()/int64(lim.Period) == at[j].UnixNano()/int64(lim.Period) && n > lim.Rate {
					t.Fatalf("SEED=%d %+v: %d admitted in one window", seed, lim, n)
				}
			}
		}
	}
}
