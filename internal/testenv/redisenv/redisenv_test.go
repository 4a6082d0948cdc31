package redisenv_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPrivateServers(t *testing.T) {
	ctx := context.Background()
	r := testenv.StartRedis(t)
	c := redisenv.Server(t, r)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after restart without persistence: exists=%d err=%v", n, err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func TestSharedBackends(t *testing.T) {
	if err := redisenv.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestRedisSentinel(t *testing.T) {
	t.Parallel()
	s := testenv.StartRedisSentinel(t)
	c := redisenv.Failover(t, s)
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The write reached the master the sentinel reported.
	if v, err := redisenv.Server(t, s.Master).Get(t.Context(), "k").Result(); err != nil || v != "v" {
		t.Fatalf("master holds %q, err %v; want v", v, err)
	}
}

func TestRedisCluster(t *testing.T) {
	t.Parallel()
	c := redisenv.Cluster(t, testenv.StartRedisCluster(t, 3))
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := c.Set(t.Context(), k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A real client through the proxy: go-redis sees a silent server while it
// is blackholed and works again once it passes.
func TestProxyRealClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := testenv.StartRedis(t)
	rp := testenv.NewProxy(t, r.Addr())
	rc := goredis.NewClient(&goredis.Options{Addr: rp.Addr(), ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rp.SetMode(testenv.Blackhole)
	var ne net.Error
	if err := rc.Ping(ctx).Err(); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("redis ping through a blackhole: %v; want a timeout", err)
	}
	rp.SetMode(testenv.Pass)
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis ping after the blackhole: %v", err)
	}
}
