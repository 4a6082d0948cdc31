package ratelimittest

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/ratelimit"
)

// benchLimit admits everything the benchmark offers, so every decision
// takes the writing path.
func benchLimit(alg ratelimit.Algorithm) ratelimit.Limit {
	l := ratelimit.Limit{Algorithm: alg, Rate: 1_000_000, Period: time.Second}
	if alg == ratelimit.SlidingLog {
		l.Rate = batontype.MaxLogLimit
	}
	return l
}

// runConcurrent calls op b.N times from conc goroutines.
func runConcurrent(b *testing.B, conc int, op func(ctx context.Context) error) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	if conc == 1 {
		for b.Loop() {
			if err := op(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRedis measures decisions per second on one hot key for every
// algorithm at concurrency 1 and 16. The comparison with other Redis rate
// limiters lives in the bench module (bench/cmd/benchrun), so that they
// stay out of this module's dependencies.
func BenchmarkRedis(b *testing.B) {
	provider := newRedisProvider(b)
	for _, conc := range []int{1, 16} {
		key := "bench-" + testenv.Unique()
		for _, alg := range allAlgorithms {
			l, err := ratelimit.New(provider, []ratelimit.Limit{benchLimit(alg)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/c%d", alg, conc), func(b *testing.B) {
				runConcurrent(b, conc, func(ctx context.Context) error {
					res, err := l.Allow(ctx, key)
					if err == nil && !res.Allowed {
						err = fmt.Errorf("refused: %+v", res)
					}
					return err
				})
			})
		}
	}
}

// BenchmarkPostgres measures decisions per second on one hot key (every
// decision locks the same row) at concurrency 1 and 16.
func BenchmarkPostgres(b *testing.B) {
	provider := newPostgresProvider(b)
	for _, conc := range []int{1, 16} {
		key := "bench-" + testenv.Unique()
		for _, alg := range allAlgorithms {
			l, err := ratelimit.New(provider, []ratelimit.Limit{benchLimit(alg)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/c%d", alg, conc), func(b *testing.B) {
				runConcurrent(b, conc, func(ctx context.Context) error {
					_, err := l.Allow(ctx, key)
					return err
				})
			})
		}
	}
}
