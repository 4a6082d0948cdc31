package memory_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/memory"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestConformance(t *testing.T) {
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider { return memory.New(nil) })
}

func BenchmarkProvider(b *testing.B) {
	lockprovidertest.Bench(b, memory.New(nil))
}

// BenchmarkHandoff is the shared hand-off benchmark on the in-process
// provider: the floor that the Redis and PostgreSQL figures compare with.
func BenchmarkHandoff(b *testing.B) { lockprovidertest.BenchHandoff(b, memory.New(nil)) }

func TestAdmin(t *testing.T) {
	lockprovidertest.RunAdmin(t, func(t *testing.T) lockprovider.Provider { return memory.New(nil) })
}

func TestLedger(t *testing.T) {
	lockprovidertest.RunLedger(t, func(t *testing.T) lockprovider.Provider { return memory.New(nil) })
}

func TestRegistry(t *testing.T) {
	lockprovidertest.RunRegistry(t, func(t *testing.T) lockprovider.Provider { return memory.New(nil) })
}

func TestBatch(t *testing.T) {
	lockprovidertest.RunBatch(t, func(t *testing.T) lockprovider.Provider { return memory.New(nil) })
}
