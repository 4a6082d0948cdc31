package memory_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/memory"
)

// The rate-limit conformance suite on the reference implementation itself:
// it checks the suite's own expectations (fresh keys, atomicity, bounds)
// against the code the other providers are compared with.
func TestRateConformance(t *testing.T) {
	t.Parallel()
	lockprovidertest.RunRate(t, func(*testing.T) lockprovider.RateLimiter { return memory.New(nil) })
}
