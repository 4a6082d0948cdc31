package main

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-go/baton"
	batonotel "github.com/baton-go/baton/contrib/otel"
	batonprom "github.com/baton-go/baton/contrib/prometheus"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/observe"
	"github.com/baton-go/baton/ratelimit"
)

// observers are the telemetry set-ups compared: none, one that does
// nothing (the cost of the events themselves), the two adapters as an
// application would run them (the OpenTelemetry SDK with its default
// configuration: metrics, and spans only under a recording parent, which
// the benchmark's operations do not have; a Prometheus registry), and the
// OpenTelemetry adapter tracing every operation (RootSpans, every span
// sampled into a batch processor), the most it can cost.
func observers() ([]string, []observe.Observer, func(), error) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	stop := func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
	otelObs, err := batonotel.New(&batonotel.Config{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	otelTraced, err := batonotel.New(&batonotel.Config{MeterProvider: mp, TracerProvider: tp, RootSpans: true})
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	promObs, err := batonprom.New(nil)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	if err := prometheus.NewRegistry().Register(promObs); err != nil {
		stop()
		return nil, nil, nil, err
	}
	noop := observe.Func(func(context.Context, observe.Event) {})
	return []string{"no observer", "no-op observer", "otel", "prometheus", "otel, every op traced"},
		[]observe.Observer{nil, noop, otelObs, promObs, otelTraced}, stop, nil
}

// telemetryRatios: each set-up against no observer. An adapter may cost
// at most 5 % of the Redis lock cycle.
func telemetryRatios(budget float64) []ratio {
	return []ratio{
		{"no-op observer", "no observer", 0},
		{"otel", "no observer", budget},
		{"prometheus", "no observer", budget},
		{"otel, every op traced", "no observer", 0},
	}
}

// telemetryComparisons measures a Locker's lock cycle (memory and Redis
// providers) and a rate decision (Redis) under each observer set-up.
func telemetryComparisons(e *env) ([]comparison, func(), error) {
	names, obs, stop, err := observers()
	if err != nil {
		return nil, nil, err
	}
	rp, err := redisprovider.New(e.redis, &redisprovider.Config{Prefix: e.prefix + "telemetry:"})
	if err != nil {
		stop()
		return nil, nil, err
	}
	lockCmp := func(id, title string, p lockprovider.Provider, budget float64) (comparison, error) {
		c := comparison{id: id, title: title, concs: e.concs, ratios: telemetryRatios(budget),
			note: "A Locker's TryAcquire + Release on a name per goroutine, without an observer, with one that does nothing, " +
				"with each adapter as configured by default (OpenTelemetry: metrics, and spans under a recording parent span, " +
				"which these operations lack; a Prometheus registry), and with OpenTelemetry tracing every operation " +
				"(RootSpans, every span sampled into a batch processor)."}
		opts := &baton.AcquireOptions{AtMostFor: leaseLen}
		for i, o := range obs {
			l, err := baton.NewLocker(p, &baton.Config{LockedBy: "bench", AtMostFor: leaseLen, Observer: o})
			if err != nil {
				return c, err
			}
			// Each set-up locks names of its own.
			prefix := fmt.Sprintf("t%d-", i)
			c.contenders = append(c.contenders, contender{names[i], func(ctx context.Context, w int) error {
				k, err := l.TryAcquire(ctx, prefix+workerNames[w], opts)
				if err != nil {
					return err
				}
				return k.Release(ctx)
			}})
		}
		return c, nil
	}
	memP, err := memory.New(nil)
	if err != nil {
		stop()
		return nil, nil, err
	}
	mem, err := lockCmp("telemetry-lock-memory", "Telemetry: lock cycle on the memory provider", memP, 0)
	if err != nil {
		stop()
		return nil, nil, err
	}
	red, err := lockCmp("telemetry-lock-redis", "Telemetry: lock cycle on Redis", rp, 0.95)
	if err != nil {
		stop()
		return nil, nil, err
	}
	rate := comparison{id: "telemetry-rate-redis", title: "Telemetry: rate decision on Redis (GCRA)", concs: e.concs,
		ratios: telemetryRatios(0.95),
		note:   "One Allow per operation on a key per goroutine, under each observer set-up."}
	base, err := ratelimit.New(rp, []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 1_000_000, Period: time.Second, Name: "bench"}}, nil)
	if err != nil {
		stop()
		return nil, nil, err
	}
	for i, o := range obs {
		l, err := ratelimit.New(rp, base.Limits(), &ratelimit.Config{Observer: o})
		if err != nil {
			stop()
			return nil, nil, err
		}
		prefix := fmt.Sprintf("t%d-", i)
		rate.contenders = append(rate.contenders, contender{names[i], func(ctx context.Context, w int) error {
			res, err := l.Allow(ctx, prefix+workerNames[w])
			if err == nil && !res.Allowed {
				err = fmt.Errorf("refused: %+v", res)
			}
			return err
		}})
	}
	return []comparison{mem, red, rate}, stop, nil
}
