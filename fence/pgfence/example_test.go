package pgfence_test

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
)

// An inventory update, fenced: one statement applies the decrement only
// for a token not older than the row's last_fence.
func ExampleGuard_Exec() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/shop")
	if err != nil {
		return
	}
	defer pool.Close()
	guard, err := pgfence.NewGuard("inventory", "product_id", nil)
	if err != nil {
		return
	}
	// Once, at migration time: ALTER TABLE inventory ADD COLUMN IF NOT
	// EXISTS last_fence bigint.
	if err := guard.AddColumn(ctx, pool); err != nil {
		return
	}
	var token int64 = 42 // lock.Token() of the lock named after product 42
	err = guard.Exec(ctx, pool, token, 42, "stock = stock - $1", 1)
	switch {
	case errors.Is(err, fence.ErrStaleToken):
		// The lock passed to another holder while we were paused.
	case errors.Is(err, fence.ErrNotFound):
		// No such product.
	}
}
