package batontest

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider"
)

var benchSeq atomic.Int64

// benchLock measures TryAcquire+Release through a Locker and, for the
// ratio, the same two provider calls made directly. Each goroutine of
// RunParallel uses a name of its own, so the figures are per-operation
// costs, not contention.
func benchLock(b *testing.B, p lockprovider.Provider) {
	ctx := context.Background()
	b.Run("baton", func(b *testing.B) {
		l, err := baton.NewLocker(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			name := "bench-" + strconv.FormatInt(benchSeq.Add(1), 10)
			opts := &baton.AcquireOptions{AtMostFor: 10 * time.Second}
			for pb.Next() {
				lock, err := l.TryAcquire(ctx, name, opts)
				if err != nil {
					b.Error(err)
					return
				}
				if err := lock.Release(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("provider", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			name := "bench-" + strconv.FormatInt(benchSeq.Add(1), 10)
			for pb.Next() {
				owner := lockprovider.NewOwner()
				if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, LockedBy: "bench", AtMostFor: 10 * time.Second}); err != nil {
					b.Error(err)
					return
				}
				if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkTryAcquireReleaseMemory(b *testing.B) { benchLock(b, newMemory(b, nil)) }
