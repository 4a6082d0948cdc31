package ratelimittest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/ratelimit"
)

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })

func serve(h http.Handler, mutate func(*http.Request)) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/", nil)
	if mutate != nil {
		mutate(req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestMiddlewareHeadersAndRetryAfter(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(epoch)
	l := mustNew(t, memoryAt(t, clk),
		// One per 1.5 s: a refusal must wait 1.5 s, sent as 2.
		ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 2, Period: 3 * time.Second, Burst: 1, Name: "slow"},
		ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 100, Period: time.Hour, Name: "hourly"},
	)
	h := ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{})(okHandler)

	rec := serve(h, nil)
	if rec.Code != 200 || rec.Body.String() != "ok" {
		t.Fatalf("first request: %d %q", rec.Code, rec.Body)
	}
	wantPolicy := `"slow";q=1;w=3;baton-rate=2;baton-burst=1, "hourly";q=100;w=3600`
	if got := rec.Header().Get("RateLimit-Policy"); got != wantPolicy {
		t.Errorf("RateLimit-Policy = %s; want %s", got, wantPolicy)
	}
	if got, want := rec.Header().Get("RateLimit"), `"slow";r=0;t=2, "hourly";r=99;t=3600`; got != want {
		t.Errorf("RateLimit = %s; want %s", got, want)
	}
	if got := rec.Header().Get("Retry-After"); got != "" {
		t.Errorf("Retry-After on an admitted request: %q", got)
	}

	clk.Advance(time.Millisecond)
	rec = serve(h, nil)
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("second request: %d; want 429", rec.Code)
	}
	// 1.499 s rounds up to 2, never down (a client waiting 1 s would be
	// refused again).
	if got := rec.Header().Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q; want \"2\"", got)
	}
	if got, want := rec.Header().Get("RateLimit"), `"slow";r=0;t=2, "hourly";r=99;t=3600`; got != want {
		t.Errorf("RateLimit on 429 = %s; want %s (the refused request charged nothing)", got, want)
	}
	if rec.Header().Get("RateLimit-Policy") != wantPolicy {
		t.Errorf("RateLimit-Policy missing on 429")
	}

	// Another client (RemoteIP key) is not affected.
	rec = serve(h, func(r *http.Request) { r.RemoteAddr = "198.51.100.7:5555" })
	if rec.Code != 200 {
		t.Errorf("another address got %d", rec.Code)
	}
	clk.Advance(1499 * time.Millisecond)
	if rec := serve(h, nil); rec.Code != 200 {
		t.Errorf("after the retry time: %d; want 200", rec.Code)
	}
}

func TestMiddlewareRetryAfterRounding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{
		{time.Microsecond, "1"},
		{999 * time.Millisecond, "1"},
		{time.Second, "1"},
		{time.Second + time.Microsecond, "2"},
		{59*time.Second + 500*time.Millisecond, "60"},
	} {
		clk := newFakeClock(epoch)
		// Burst 1 at one per minute: after one request, the retry time is
		// a minute minus how far the clock moved.
		l := mustNew(t, memoryAt(t, clk), ratelimit.Limit{Algorithm: ratelimit.TokenBucket, Rate: 1, Period: time.Minute})
		h := ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{})(okHandler)
		serve(h, nil)
		clk.Advance(time.Minute - tc.wait)
		rec := serve(h, nil)
		if rec.Code != 429 || rec.Header().Get("Retry-After") != tc.want {
			t.Errorf("retry %v: %d Retry-After %q; want 429 %q", tc.wait, rec.Code, rec.Header().Get("Retry-After"), tc.want)
		}
	}
}

func TestMiddlewareKeys(t *testing.T) {
	t.Parallel()
	l := mustNew(t, memoryAt(t, newFakeClock(epoch)), ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 1, Period: time.Hour})
	h := ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{Key: ratelimit.HeaderKey("X-Api-Key")})(okHandler)
	if rec := serve(h, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("no key header: %d; want 400", rec.Code)
	}
	if rec := serve(h, func(r *http.Request) { r.Header.Set("X-Api-Key", strings.Repeat("x", 300)) }); rec.Code != http.StatusBadRequest {
		t.Errorf("over-long key: %d; want 400", rec.Code)
	}
	withKey := func(k string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("X-Api-Key", k) } }
	for _, want := range []int{200, 429} {
		if rec := serve(h, withKey("a")); rec.Code != want {
			t.Errorf("key a: %d; want %d", rec.Code, want)
		}
	}
	if rec := serve(h, withKey("b")); rec.Code != 200 {
		t.Errorf("key b: %d; want 200", rec.Code)
	}
	// Custom key and cost.
	h = ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{
		Key:  func(r *http.Request) (string, error) { return "user:" + r.URL.Query().Get("u"), nil },
		Cost: func(r *http.Request) int64 { return 2 },
	})(okHandler)
	if rec := serve(h, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("cost 2 above capacity 1: %d; want 400", rec.Code)
	}
	if got, err := ratelimit.RemoteIP(httptest.NewRequest("GET", "/", nil)); got != "192.0.2.1" || err != nil {
		t.Errorf("RemoteIP = %q, %v", got, err)
	}
}

// failingProvider stands for a provider whose backend is unreachable; the Redis
// tests cover a real dead server.
type failingProvider struct{}

var errProviderDown = errors.New("provider down")

func (failingProvider) RateLimit(context.Context, lockprovider.RateRequest) (lockprovider.RateResult, error) {
	return lockprovider.RateResult{}, errProviderDown
}

func TestMiddlewareFailPolicy(t *testing.T) {
	t.Parallel()
	checkFailPolicy(t, failingProvider{}, errProviderDown)
}

func checkFailPolicy(t *testing.T, provider lockprovider.RateLimiter, wantErr error) {
	t.Helper()
	l := mustNew(t, provider, ratelimit.PerSecond(10))
	for _, open := range []bool{true, false} {
		var errs atomic.Int64
		var logs bytes.Buffer
		h := ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{
			FailOpen: open,
			OnError: func(r *http.Request, err error) {
				if wantErr != nil && !errors.Is(err, wantErr) {
					t.Errorf("OnError(%v); want %v", err, wantErr)
				}
				errs.Add(1)
			},
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})(okHandler)
		for range 3 {
			rec := serve(h, nil)
			want := http.StatusServiceUnavailable
			if open {
				want = http.StatusOK
			}
			if rec.Code != want {
				t.Errorf("FailOpen=%v: %d; want %d", open, rec.Code, want)
			}
			if rec.Header().Get("RateLimit") != "" {
				t.Errorf("FailOpen=%v: RateLimit header without a decision", open)
			}
		}
		if errs.Load() != 3 {
			t.Errorf("FailOpen=%v: OnError called %d times; want 3", open, errs.Load())
		}
		if got := strings.Count(logs.String(), "rate limit provider failed"); got != 3 {
			t.Errorf("FailOpen=%v: %d warnings logged; want 3:\n%s", open, got, logs.String())
		}
	}
}

// Default policy names print the period without trailing zero units.
func TestDefaultPolicyNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		limit ratelimit.Limit
		want  string
	}{
		{ratelimit.PerSecond(100), `"100-per-1s"`},
		{ratelimit.PerMinute(100), `"100-per-1m"`},
		{ratelimit.PerHour(10000), `"10000-per-1h"`},
		{ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 5, Period: 90 * time.Minute}, `"5-per-1h30m"`},
		{ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 5, Period: time.Hour + 5*time.Second}, `"5-per-1h0m5s"`},
		{ratelimit.Limit{Algorithm: ratelimit.SlidingLog, Rate: 20, Period: 500 * time.Millisecond}, `"20-per-500ms"`},
		{ratelimit.Limit{Algorithm: ratelimit.SlidingLog, Rate: 20, Period: 1500 * time.Millisecond}, `"20-per-1.5s"`},
		{ratelimit.Limit{Algorithm: ratelimit.SlidingWindow, Rate: 20, Period: 24 * time.Hour}, `"20-per-24h"`},
	}
	for _, tc := range cases {
		l := mustNew(t, newMemory(t, nil), tc.limit)
		rec := httptest.NewRecorder()
		ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{})(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if got := rec.Header().Get("RateLimit-Policy"); !strings.HasPrefix(got, tc.want+";") {
			t.Errorf("%v per %v: RateLimit-Policy %s; want the name %s", tc.limit.Rate, tc.limit.Period, got, tc.want)
		}
	}
}

// The documented edges of Cost on every provider: 0 is a peek that lets an
// exhausted key through uncharged; a cost above capacity or below zero is a
// 400 without rate-limit fields.
func TestMiddlewareCostEdges(t *testing.T) {
	t.Parallel()
	for _, sc := range providers {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			l := mustNew(t, sc.new(t), ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 2, Period: 366 * 24 * time.Hour})
			key := "cost-" + testenv.Unique()
			var cost atomic.Int64
			h := ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{
				Key:  func(*http.Request) (string, error) { return key, nil },
				Cost: func(*http.Request) int64 { return cost.Load() },
			})(okHandler)
			for _, c := range []struct {
				cost      int64
				code      int
				rateLimit string
			}{
				{2, 200, `"2-per-8784h";r=0`},
				{1, 429, `"2-per-8784h";r=0`},
				{0, 200, `"2-per-8784h";r=0`},
				{3, 400, ""},
				{-1, 400, ""},
			} {
				cost.Store(c.cost)
				rec := serve(h, nil)
				got := rec.Header().Get("RateLimit")
				if rec.Code != c.code || !strings.HasPrefix(got, c.rateLimit) || (c.rateLimit == "") != (got == "") {
					t.Errorf("cost %d: %d, RateLimit %q; want %d, %q…", c.cost, rec.Code, got, c.code, c.rateLimit)
				}
			}
			res := allow(t, l, key, 0)
			if !res.Allowed || res.RetryAfter != 0 || res.Remaining != 0 {
				t.Errorf("peek at an exhausted key: %+v; want Allowed, RetryAfter 0, Remaining 0", res)
			}
		})
	}
}
