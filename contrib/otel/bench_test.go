package otel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-go/baton"
	batonotel "github.com/baton-go/baton/contrib/otel"
	"github.com/baton-go/baton/observe"
)

// BenchmarkLockCycle is a Locker's TryAcquire + Release on the memory
// provider, where the observer's cost shows most: without an observer,
// with the adapter as configured by default (metrics; spans only under a
// recording parent, here none), under a sampled parent span, and with
// RootSpans. bench/ (benchrun -only telemetry) compares them on Redis.
func BenchmarkLockCycle(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	newObs := func(root bool) observe.Observer {
		o, err := batonotel.New(&batonotel.Config{MeterProvider: mp, TracerProvider: tp, RootSpans: root})
		if err != nil {
			b.Fatal(err)
		}
		return o
	}
	parent, span := tp.Tracer("bench").Start(context.Background(), "request")
	defer span.End()
	for _, c := range []struct {
		name string
		obs  observe.Observer
		ctx  context.Context
	}{
		{"none", nil, context.Background()},
		{"otel", newObs(false), context.Background()},
		{"otel-parent", newObs(false), parent},
		{"otel-root-spans", newObs(true), context.Background()},
	} {
		b.Run(c.name, func(b *testing.B) {
			l, err := baton.NewLocker(newMemory(b, nil), &baton.Config{Observer: c.obs})
			if err != nil {
				b.Fatal(err)
			}
			opts := &baton.AcquireOptions{AtMostFor: 10 * time.Second}
			b.ReportAllocs()
			for b.Loop() {
				k, err := l.TryAcquire(c.ctx, "bench", opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := k.Release(c.ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
