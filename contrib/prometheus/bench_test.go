package prometheus_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-go/baton"
	batonprom "github.com/baton-go/baton/contrib/prometheus"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/observe"
)

// BenchmarkLockCycle is a Locker's TryAcquire + Release on the memory
// provider, where the collector's cost shows most, without and with it.
// bench/ (benchrun -only telemetry) compares them on Redis.
func BenchmarkLockCycle(b *testing.B) {
	c, err := batonprom.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	prometheus.NewRegistry().MustRegister(c)
	for _, o := range []struct {
		name string
		obs  observe.Observer
	}{{"none", nil}, {"prometheus", c}} {
		b.Run(o.name, func(b *testing.B) {
			l, err := baton.NewLocker(newMemory(b, nil), &baton.Config{Observer: o.obs})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			opts := &baton.AcquireOptions{AtMostFor: 10 * time.Second}
			b.ReportAllocs()
			for b.Loop() {
				k, err := l.TryAcquire(ctx, "bench", opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := k.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
