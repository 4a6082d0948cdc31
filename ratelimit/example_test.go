package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/observe"
	"github.com/baton-go/baton/ratelimit"
)

// Three requests per hour on a fixed window. The memory provider stands in for
// Redis or PostgreSQL (its clock is pinned here so the output is stable).
func Example() {
	provider, err := memory.New(&memory.Config{Now: func() time.Time { return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(provider, []ratelimit.Limit{{Algorithm: ratelimit.FixedWindow, Rate: 3, Period: time.Hour}}, nil)
	if err != nil {
		panic(err)
	}
	for range 4 {
		res, err := limiter.Allow(context.Background(), "user:42")
		if err != nil {
			panic(err)
		}
		fmt.Println(res.Allowed, res.Remaining, res.RetryAfter)
	}
	// Output:
	// true 2 0s
	// true 1 0s
	// true 0 0s
	// false 0 1h0m0s
}

// A burst limit and a long-term quota, charged together: a refusal by either
// charges neither.
func Example_multipleLimits() {
	provider, err := memory.New(&memory.Config{Now: func() time.Time { return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(provider, []ratelimit.Limit{
		ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 50, Period: time.Second, Burst: 5, Name: "burst"},
		ratelimit.Limit{Algorithm: ratelimit.SlidingWindow, Rate: 1000, Period: time.Hour, Name: "hourly"}}, nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	res, _ := limiter.AllowN(ctx, "tenant-a", 5)
	fmt.Println(res.Allowed, res.States[0].Remaining, res.States[1].Remaining)
	res, _ = limiter.AllowN(ctx, "tenant-a", 1)
	fmt.Println(res.Allowed, res.Limit.Name, res.RetryAfter, res.States[1].Remaining)
	// Output:
	// true 0 995
	// false burst 20ms 995
}

// Bad input is an error, never a clamp.
func ExampleLimiter_AllowN_exceedsCapacity() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	limiter, _ := ratelimit.New(provider, []ratelimit.Limit{ratelimit.PerSecond(10)}, nil)
	_, err = limiter.AllowN(context.Background(), "k", 11)
	fmt.Println(errors.Is(err, ratelimit.ErrExceedsCapacity), errors.Is(err, ratelimit.ErrInvalid))
	// Output: true true
}

// The HTTP middleware keyed by an API key header.
func ExampleMiddleware() {
	provider, err := memory.New(&memory.Config{Now: func() time.Time { return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	limiter, _ := ratelimit.New(provider, []ratelimit.Limit{{Algorithm: ratelimit.FixedWindow, Rate: 2, Period: time.Minute, Name: "default"}}, nil)
	h := ratelimit.Middleware(limiter, &ratelimit.MiddlewareConfig{Key: ratelimit.HeaderKey("X-Api-Key")})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	for range 3 {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-Api-Key", "k1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%d RateLimit: %s Retry-After: %q\n", rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"))
	}
	fmt.Println(limiterPolicy(h))
	// Output:
	// 200 RateLimit: "default";r=1;t=60 Retry-After: ""
	// 200 RateLimit: "default";r=0;t=60 Retry-After: ""
	// 429 RateLimit: "default";r=0;t=60 Retry-After: "60"
	// "default";q=2;w=60
}

func limiterPolicy(h http.Handler) string {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("X-Api-Key", "k2")
	h.ServeHTTP(rec, req)
	return rec.Header().Get("RateLimit-Policy")
}

// A Limiter that reports its decisions to an observer (here one that
// prints; in an application, the OpenTelemetry or Prometheus adapter of
// contrib/). Events name the policy, never the key.
func ExampleConfig() {
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		fmt.Println(e.Kind, e.Policy, e.Outcome, e.RetryAfter > 0)
	})
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
	// Output:
	// ratelimit.decision signup allowed false
	// ratelimit.decision signup denied true
}
