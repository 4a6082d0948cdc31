package redis_test

import (
	"sync"
	"testing"

	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// The conformance suite, every capability included, on the shared
// standalone Redis; afterwards every key the suite left behind must have
// a TTL.
// Every capability the provider has; lockprovidertest.Run exercises
// each one it finds, so losing a method must fail to compile here.
var (
	_ lockprovider.Provider        = (*redisprovider.Provider)(nil)
	_ lockprovider.ReleaseNotifier = (*redisprovider.Provider)(nil)
	_ lockprovider.Inspector       = (*redisprovider.Provider)(nil)
	_ lockprovider.Admin           = (*redisprovider.Provider)(nil)
	_ lockprovider.Ledger          = (*redisprovider.Provider)(nil)
	_ lockprovider.Registry        = (*redisprovider.Provider)(nil)
	_ lockprovider.Control         = (*redisprovider.Provider)(nil)
	_ lockprovider.BatchAcquirer   = (*redisprovider.Provider)(nil)
	_ lockprovider.BatchLedger     = (*redisprovider.Provider)(nil)
	_ lockprovider.BatchReleaser   = (*redisprovider.Provider)(nil)
	_ lockprovider.RateLimiter     = (*redisprovider.Provider)(nil)
	_ lockprovider.RateLister      = (*redisprovider.Provider)(nil)
)

func TestConformance(t *testing.T) {
	t.Parallel()
	conformance(t, redisenv.Client(t))
}

// conformance runs the suite with providers on c, then checks that every
// key they left behind expires.
func conformance(t *testing.T, c redisprovider.Client) {
	tr := &tracked{c: c}
	t.Run("suite", func(t *testing.T) {
		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider { return tr.provider(t) })
	})
	if t.Failed() {
		return
	}
	tr.checkTTLs(t)
}

// tracked hands out providers with fresh key prefixes on one client and
// remembers the prefixes, so a test can inspect the keys they left.
type tracked struct {
	c        redisprovider.Client
	mu       sync.Mutex
	prefixes []string
}

func (tr *tracked) provider(t *testing.T) *redisprovider.Provider {
	p, prefix := newProvider(t, tr.c)
	tr.mu.Lock()
	tr.prefixes = append(tr.prefixes, prefix)
	tr.mu.Unlock()
	return p
}

func (tr *tracked) checkTTLs(t *testing.T) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	checkTTLs(t, tr.c, tr.prefixes...)
}
