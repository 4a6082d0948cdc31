// Package redisenv gives tests go-redis clients of the servers testenv
// provides. It is apart from testenv so that only the tests that use Redis
// link go-redis. Every client it returns keeps its context deadlines
// (ContextTimeoutEnabled), as the Redis provider requires, and is closed
// when the test ends.
package redisenv

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
)

// Client returns a client of the shared Redis (testenv.RedisURL). Use
// testenv.Prefix for the keys the test writes.
func Client(t testing.TB) *goredis.Client {
	t.Helper()
	opt, err := goredis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatalf("redisenv: TEST_REDIS_URL: %v", err)
	}
	opt.ContextTimeoutEnabled = true
	return closing(t, goredis.NewClient(opt))
}

// Server returns a client of a private server.
func Server(t testing.TB, s *testenv.RedisServer) *goredis.Client {
	return closing(t, goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true}))
}

// Cluster returns a cluster client of a private cluster.
func Cluster(t testing.TB, c *testenv.RedisCluster) *goredis.ClusterClient {
	cl := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Failover returns a Sentinel failover client of the master that s
// monitors.
func Failover(t testing.TB, s *testenv.RedisSentinel) *goredis.Client {
	return closing(t, goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: s.MasterName,
		SentinelAddrs: []string{s.Addr}, ContextTimeoutEnabled: true}))
}

func closing(t testing.TB, c *goredis.Client) *goredis.Client {
	t.Cleanup(func() { _ = c.Close() })
	return c
}
