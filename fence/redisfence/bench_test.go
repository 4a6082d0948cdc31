package redisfence_test

import (
	"context"
	"testing"

	"github.com/baton-go/baton/fence/redisfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
)

// BenchmarkSet compares a fenced Set with the plain HSET it wraps: the
// price of the script's fence comparison.
func BenchmarkSet(b *testing.B) {
	ctx := context.Background()
	c := redisenv.Client(b)
	key := testenv.Prefix(b) + "k"
	b.Cleanup(func() { c.Del(context.Background(), key) })
	r, err := redisfence.NewGuard(c)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Guard.Set", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := r.Set(ctx, key, 7, "value"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-HSET", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.HSet(ctx, key, "value", "value").Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
