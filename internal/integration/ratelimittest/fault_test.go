package ratelimittest

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/ratelimit"
)

// The middleware across a Redis outage and restart (without persistence):
// decisions while up, the failure policy while down (503 or pass, every
// failure counted), and normal decisions again once the server is back, with
// no error left stuck in the client or the limiter.
func TestFaultMiddlewareRedisRestart(t *testing.T) {
	t.Parallel()
	for _, open := range []bool{false, true} {
		name := map[bool]string{false: "fail-closed", true: "fail-open"}[open]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := testenv.StartRedis(t)
			client := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
				DialTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond})
			t.Cleanup(func() { _ = client.Close() })
			p, err := redisprovider.New(client, nil)
			if err != nil {
				t.Fatal(err)
			}
			var failures atomic.Int64
			h := ratelimit.Middleware(mustNew(t, p, ratelimit.PerMinute(3)), &ratelimit.MiddlewareConfig{
				FailOpen: open,
				OnError:  func(*http.Request, error) { failures.Add(1) },
			})(okHandler)

			// decided checks that the next requests get 200, 200, …, 429
			// with the rate-limit fields: allowed passes, then one refusal.
			decided := func(phase string, allowed int) {
				t.Helper()
				for i := range allowed + 1 {
					rec := serve(h, nil)
					want := http.StatusOK
					if i == allowed {
						want = http.StatusTooManyRequests
					}
					if rec.Code != want || rec.Header().Get("RateLimit") == "" {
						t.Errorf("%s, request %d: %d (RateLimit %q); want %d with the field",
							phase, i+1, rec.Code, rec.Header().Get("RateLimit"), want)
					}
				}
			}

			decided("server up", 3)
			if n := failures.Load(); n != 0 {
				t.Fatalf("%d provider failures with the server up", n)
			}

			srv.Kill()
			for i := range 3 {
				rec := serve(h, nil)
				want := http.StatusServiceUnavailable
				if open {
					want = http.StatusOK
				}
				if rec.Code != want {
					t.Errorf("server down, request %d: %d; want %d", i+1, rec.Code, want)
				}
			}
			if n := failures.Load(); n != 3 {
				t.Errorf("OnError called %d times for 3 requests while down; want 3", n)
			}

			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			// The first request after the restart may still meet a dead
			// pooled connection; then decisions must be normal again. The
			// restart lost the counters, so the full limit is available.
			downFailures := failures.Load()
			deadline := time.Now().Add(5 * time.Second)
			first := serve(h, nil)
			for first.Header().Get("RateLimit") == "" {
				if time.Now().After(deadline) {
					t.Fatalf("no decision within 5s of the restart: last status %d", first.Code)
				}
				time.Sleep(20 * time.Millisecond)
				first = serve(h, nil)
			}
			if first.Code != http.StatusOK {
				t.Errorf("first decision after the restart: %d; want 200", first.Code)
			}
			recovering := failures.Load() - downFailures
			decided("after the restart", 2)
			if n := failures.Load() - downFailures - recovering; n != 0 {
				t.Errorf("%d provider failures after the first decision following the restart", n)
			}
			t.Logf("%d failures while down, %d before the first decision after the restart", downFailures, recovering)
		})
	}
}
