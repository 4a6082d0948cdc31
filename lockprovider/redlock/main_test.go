package redlock_test

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/redlock"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// masters starts n private redis-server processes (stopped when the test
// ends) and returns them with a client of each.
func masters(t testing.TB, n int) ([]*testenv.RedisServer, []*goredis.Client) {
	t.Helper()
	servers := make([]*testenv.RedisServer, n)
	clients := make([]*goredis.Client, n)
	for i := range n {
		servers[i] = testenv.StartRedis(t)
		clients[i] = client(t, servers[i])
	}
	return servers, clients
}

// client returns a client of s set up as the package documentation
// recommends for Redlock masters: one dial attempt, no command retries, so
// a dead master costs an operation little. It is closed when the test ends.
func client(t testing.TB, s *testenv.RedisServer) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{
		Addr: s.Addr(), DialerRetries: 1, MaxRetries: -1, DialTimeout: 2 * time.Second, ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newProvider returns a provider over clients under a prefix of its own.
func newProvider(t testing.TB, clients []*goredis.Client, cfg redlock.Config) *redlock.Provider {
	t.Helper()
	cfg.Prefix = testenv.Prefix(t)
	p, err := redlock.New(clients, &cfg)
	if err != nil {
		t.Fatalf("redlock.New: %v", err)
	}
	return p
}
