package redlock_test

import (
	"strconv"
	"testing"

	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/redlock"
)

// Acquire+Release over N private masters: two rounds to every master, then
// one.
func BenchmarkRedlock(b *testing.B) {
	for _, n := range []int{3, 5} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			_, clients := masters(b, n)
			lockprovidertest.Bench(b, newProvider(b, clients, redlock.Config{}))
		})
	}
}

// Hand-off: release, the waiter woken by a master's announcement, its
// acquire.
func BenchmarkHandoff(b *testing.B) {
	for _, n := range []int{3, 5} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			_, clients := masters(b, n)
			lockprovidertest.BenchHandoff(b, newProvider(b, clients, redlock.Config{}))
		})
	}
}
