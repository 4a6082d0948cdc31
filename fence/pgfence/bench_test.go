package pgfence_test

import (
	"context"
	"testing"

	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/internal/testenv/pgenv"
)

// BenchmarkGuard compares a guarded update with the plain UPDATE it wraps,
// on one row, serially: the price of the fence check and the stale/missing
// classification in the same statement.
func BenchmarkGuard(b *testing.B) {
	ctx := context.Background()
	pg := pgenv.Schema(b)
	db := pg.Pool
	if _, err := db.Exec(ctx, `CREATE TABLE items (id int PRIMARY KEY, stock int NOT NULL, last_fence bigint);
		INSERT INTO items VALUES (1, 0, NULL)`); err != nil {
		b.Fatal(err)
	}
	g, err := pgfence.NewGuard("items", "id", nil)
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
