package otel_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-go/baton"
	batonotel "github.com/baton-go/baton/contrib/otel"
	"github.com/baton-go/baton/lockprovider/memory"
)

// A Locker whose acquisitions and releases become metrics, and spans
// under the request that made them. In an application, otel.New(nil)
// uses the global providers.
func Example() {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs, err := batonotel.New(&batonotel.Config{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: tp,
	})
	if err != nil {
		panic(err)
	}
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	locker, err := baton.NewLocker(provider, &baton.Config{Observer: obs})
	if err != nil {
		panic(err)
	}
	ctx, request := tp.Tracer("app").Start(context.Background(), "request")
	lock, err := locker.TryAcquire(ctx, "daily-report", nil)
	if err != nil {
		panic(err)
	}
	_ = lock.Release(ctx)
	request.End()

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "baton.lock.wait.duration" {
			p := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
			name, _ := p.Attributes.Value(batonotel.AttrLock)
			outcome, _ := p.Attributes.Value(batonotel.AttrOutcome)
			fmt.Println(m.Name, name.AsString(), outcome.AsString(), p.Count)
		}
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// baton.lock.wait.duration daily-report granted 1
	// baton.lock.acquire
	// baton.lock.release
	// request
}
