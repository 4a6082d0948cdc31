package redlock_test

import (
	"testing"

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
		clients[i] = servers[i].Client(t)
	}
	return servers, clients
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
