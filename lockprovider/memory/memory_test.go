package memory_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/memory"
)

// Every capability the provider has; lockprovidertest.Run exercises
// each one it finds, so losing a method must fail to compile here.
var (
	_ lockprovider.Provider        = (*memory.Provider)(nil)
	_ lockprovider.ReleaseNotifier = (*memory.Provider)(nil)
	_ lockprovider.Inspector       = (*memory.Provider)(nil)
	_ lockprovider.Admin           = (*memory.Provider)(nil)
	_ lockprovider.Ledger          = (*memory.Provider)(nil)
	_ lockprovider.Registry        = (*memory.Provider)(nil)
	_ lockprovider.Control         = (*memory.Provider)(nil)
	_ lockprovider.BatchAcquirer   = (*memory.Provider)(nil)
	_ lockprovider.BatchLedger     = (*memory.Provider)(nil)
	_ lockprovider.BatchReleaser   = (*memory.Provider)(nil)
	_ lockprovider.RateLimiter     = (*memory.Provider)(nil)
	_ lockprovider.RateLister      = (*memory.Provider)(nil)
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The whole conformance suite, rate limiting included: on the reference
// implementation it also checks the suite's own expectations (fresh keys,
// atomicity, bounds) against the code the other providers are compared
// with.
func TestConformance(t *testing.T) {
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider { return newMemory(t, nil) })
}

func BenchmarkProvider(b *testing.B) {
	lockprovidertest.Bench(b, newMemory(b, nil))
}

// BenchmarkHandoff is the shared hand-off benchmark on the in-process
// provider: the floor that the Redis and PostgreSQL figures compare with.
func BenchmarkHandoff(b *testing.B) { lockprovidertest.BenchHandoff(b, newMemory(b, nil)) }

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
