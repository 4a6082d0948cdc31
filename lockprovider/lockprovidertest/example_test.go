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
			p, err := memory.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		})
	}
	benchmark := func(b *testing.B) {
		p, err := memory.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		lockprovidertest.Bench(b, p)
	}
	// In a _test.go file these are TestConformance and BenchmarkProvider.
	_, _ = conformance, benchmark
}
