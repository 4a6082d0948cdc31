package lockprovidertest

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// benchConcurrency is the number of goroutines of the parallel benchmark.
const benchConcurrency = 16

// Bench measures Acquire+Release pairs on p: "serial" on one name from one
// goroutine, "parallel" with b.RunParallel at a concurrency of 16 goroutines
// (the concurrency of every comparison in docs/benchmarks.md), each on its own name
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

// BenchHandoff measures a contended hand-off on a provider that announces
// releases: the time from the start of the holder's Release to the waiter,
// woken by the provider's notification, holding the lease. It reports the
// median and p99 in nanoseconds (docs/benchmarks.md has the figures; the
// goal is a median under 1 ms on loopback, where polling peers wait
// 50-250 ms).
func BenchHandoff(b *testing.B, p interface {
	lockprovider.Provider
	lockprovider.ReleaseNotifier
}) {
	ctx := b.Context()
	name := "lpt-handoff-" + randomID()
	ch := make(chan struct{}, 1)
	holder := lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}
	if _, err := p.Acquire(ctx, holder); err != nil {
		b.Fatal(err)
	}
	stop, err := p.NotifyRelease(ctx, name, ch)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: holder.Owner}); err != nil {
			b.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			b.Fatal("no release notification within 5s")
		}
		holder.Owner = lockprovider.NewOwner() // the waiter becomes the holder
		if _, err := p.Acquire(ctx, holder); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "median-ns")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds()), "p99-ns")
}
