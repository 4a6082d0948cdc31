package lockprovidertest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// benchConcurrency is the number of goroutines of the parallel benchmark.
const benchConcurrency = 16

// Bench measures Acquire+Release pairs on p: "serial" on one name from one
// goroutine, "parallel" with b.RunParallel at a concurrency of 16 goroutines
// (as in the project's performance budgets), each on its own name
// (uncontended). Every provider's benchmark runs this same code:
//
//	func BenchmarkProvider(b *testing.B) { lockprovidertest.Bench(b, newProvider(b)) }
func Bench(b *testing.B, p lockprovider.Provider) {
	id := randomID()
	b.Run("serial", func(b *testing.B) {
		ctx := b.Context()
		ap := lockprovider.AcquireParams{
			Name: "lpt-bench-" + id + "-serial", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute,
		}
		rp := lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Acquire(ctx, ap); err != nil {
				b.Fatalf("Acquire: %v", err)
			}
			if err := p.Release(ctx, rp); err != nil {
				b.Fatalf("Release: %v", err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		ctx := b.Context()
		var seq atomic.Int64
		b.SetParallelism((benchConcurrency + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ap := lockprovider.AcquireParams{
				Name:  fmt.Sprintf("lpt-bench-%s-parallel-%d", id, seq.Add(1)),
				Owner: lockprovider.NewOwner(), AtMostFor: time.Minute,
			}
			rp := lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}
			for pb.Next() {
				if _, err := p.Acquire(ctx, ap); err != nil {
					b.Errorf("Acquire: %v", err)
					return
				}
				if err := p.Release(ctx, rp); err != nil {
					b.Errorf("Release: %v", err)
					return
				}
			}
		})
	})
}
