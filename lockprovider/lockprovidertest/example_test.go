package lockprovidertest_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/memory"
)

// A provider package, ours or a third party's, runs the conformance suite
// from its own tests. newProvider must return a provider isolated from the
// others it returns (a fresh key prefix or schema), because the subtests run
// in parallel.
func ExampleRun() {
	conformance := func(t *testing.T) {
		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
			return memory.New(nil)
		})
	}
	benchmark := func(b *testing.B) {
		lockprovidertest.Bench(b, memory.New(nil))
	}
	// In a _test.go file these are TestConformance and BenchmarkProvider.
	_, _ = conformance, benchmark
}
