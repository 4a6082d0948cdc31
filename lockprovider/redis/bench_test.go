package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The comparisons with other Redis lock libraries live in the bench module
// (bench/cmd/benchrun), so that they stay out of this module's
// dependencies.

// BenchmarkProvider is the shared provider benchmark (lockprovidertest.Bench).
func BenchmarkProvider(b *testing.B) {
	p, _ := newProvider(b, redisenv.Client(b))
	lockprovidertest.Bench(b, p)
}

// BenchmarkHandoff is the shared hand-off benchmark
// (lockprovidertest.BenchHandoff): the waiter is woken by sharded pub/sub.
func BenchmarkHandoff(b *testing.B) {
	p, _ := newProvider(b, redisenv.Client(b))
	lockprovidertest.BenchHandoff(b, p)
}
