package ratelimittest

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/ratelimit"
)

func newRedisProvider(t testing.TB) *redisprovider.Provider {
	t.Helper()
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The middleware with its Redis gone: a private server, killed after a
// first successful decision, and a client that gives up at once.
func TestMiddlewareRedisDown(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	client := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = client.Close() })
	p, err := redisprovider.New(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := mustNew(t, p, ratelimit.PerSecond(10))
	if res, err := l.Allow(context.Background(), "k"); err != nil || !res.Allowed {
		t.Fatalf("with the server up: %+v %v", res, err)
	}
	srv.Kill()
	checkFailPolicy(t, p, nil)
}

var _ lockprovider.RateLimiter = (*redisprovider.Provider)(nil)
