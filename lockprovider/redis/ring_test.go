package redis_test

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The provider on a go-redis Ring of two private servers: scripts and
// release channels are routed by the same hash tag, so a name's keys and
// its notifications land on one shard; a batch is one call per name in
// one pipeline.
func TestRing(t *testing.T) {
	t.Parallel()
	a, b := testenv.StartRedis(t), testenv.StartRedis(t)
	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = ring.Close() })
	t.Run("suite", func(t *testing.T) {
		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
			p, _ := newProvider(t, ring)
			return p
		})
	})
	t.Run("notify", func(t *testing.T) {
		p, _ := newProvider(t, ring)
		testNotify(t, p)
	})
	// Both shards got keys, and every key expires.
	for _, s := range []*testenv.RedisServer{a, b} {
		n, err := redisenv.Server(t, s).DBSize(t.Context()).Result()
		if err != nil || n == 0 {
			t.Errorf("shard %s holds %d keys (err %v), want some", s.Addr(), n, err)
		}
	}
	checkTTLs(t, redisenv.Server(t, a), "")
	checkTTLs(t, redisenv.Server(t, b), "")
}
