package redis_test

import (
	"sync"
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The conformance suite on the shared standalone Redis; afterwards every
// key the suite left behind must have a TTL.
func TestConformance(t *testing.T) {
	t.Parallel()
	c := testenv.Redis(t)
	var (
		mu       sync.Mutex
		prefixes []string
	)
	t.Run("suite", func(t *testing.T) {
		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
			p, prefix := newProvider(t, c)
			mu.Lock()
			prefixes = append(prefixes, prefix)
			mu.Unlock()
			return p
		})
	})
	if t.Failed() {
		return
	}
	checkTTLs(t, c, prefixes...)
}
