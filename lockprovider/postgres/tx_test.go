package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// A grant inside a caller's transaction that rolls back never happened: the
// name is free again at once. Its token is not issued again: the next grant
// carries a larger one, as the package documentation says.
func TestRolledBackGrant(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()

	// A committed grant first, so the name has a row and a counter.
	a := params("tx-token", time.Hour)
	first, err := p.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}

	tx, err := pg.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inTx, err := postgres.New(tx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rolledBack, err := inTx.Acquire(ctx, params("tx-token", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rolledBack.Token <= first.Token {
		t.Fatalf("grant in tx: token %d, want above the committed %d", rolledBack.Token, first.Token)
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The hour-long lease vanished with the transaction.
	next, err := p.Acquire(ctx, params("tx-token", time.Hour))
	if err != nil {
		t.Fatalf("after the rollback the name should be free: %v", err)
	}
	if next.Token <= rolledBack.Token {
		t.Errorf("token %d after a rolled-back grant with token %d: a token was issued again", next.Token, rolledBack.Token)
	}
}
