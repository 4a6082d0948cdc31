package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The rate-limit conformance suite on the shared standalone Redis;
// afterwards every key the decisions left behind must have a TTL.
func TestRateConformance(t *testing.T) {
	t.Parallel()
	tr := &tracked{c: redisenv.Client(t)}
	t.Run("suite", func(t *testing.T) {
		lockprovidertest.RunRate(t, func(t *testing.T) lockprovider.RateLimiter { return tr.provider(t) })
	})
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}
