package fence_test

import (
	"context"
	"testing"

	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/internal/testenv"
)

// BenchmarkGuard compares a guarded update with the plain UPDATE it wraps,
// on one row, serially: the price of the fence check and the stale/missing
// classification in the same statement.
func BenchmarkGuard(b *testing.B) {
	ctx := context.Background()
	pg := testenv.Postgres(b)
	db := pg.Pool
	if _, err := db.Exec(ctx, `CREATE TABLE items (id int PRIMARY KEY, stock int NOT NULL, last_fence bigint);
		INSERT INTO items VALUES (1, 0, NULL)`); err != nil {
		b.Fatal(err)
	}
	g, err := fence.NewGuard("items", "id", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("guard.Exec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := g.Exec(ctx, db, 7, 1, "stock = stock + $1", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-update", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.Exec(ctx, `UPDATE items SET stock = stock + $1 WHERE id = $2`, 1, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRedisSet(b *testing.B) {
	ctx := context.Background()
	c := testenv.Redis(b)
	key := testenv.Prefix(b) + "k"
	b.Cleanup(func() { c.Del(context.Background(), key) })
	r, err := fence.NewRedis(c)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fence.Set", func(b *testing.B) {
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
