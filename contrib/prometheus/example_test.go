package prometheus_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	batonprom "github.com/baton-go/baton/contrib/prometheus"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/ratelimit"
)

// A rate limiter whose decisions are counted per policy (never per key).
// Serve the registry with promhttp.HandlerFor.
func Example() {
	obs, err := batonprom.New(nil)
	if err != nil {
		panic(err)
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(obs)

	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(provider, []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Minute, Name: "signup"}},
		&ratelimit.Config{Observer: obs})
	if err != nil {
		panic(err)
	}
	for range 2 {
		_, _ = limiter.Allow(context.Background(), "203.0.113.7")
	}

	families, _ := registry.Gather()
	for _, mf := range families {
		if mf.GetName() != "baton_ratelimit_decision_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			fmt.Print(mf.GetName(), "{")
			for _, l := range m.GetLabel() {
				fmt.Printf("%s=%q,", l.GetName(), l.GetValue())
			}
			fmt.Println("}", m.GetHistogram().GetSampleCount())
		}
	}
	// Output:
	// baton_ratelimit_decision_duration_seconds{outcome="allowed",policy="signup",} 1
	// baton_ratelimit_decision_duration_seconds{outcome="denied",policy="signup",} 1
}
