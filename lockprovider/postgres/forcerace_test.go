package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// An Extend that waits behind a force-release's row lock must find the
// lease ended, though it ended after the Extend's statement began: the
// force-release sticks. The Extend is released from its wait only once it
// is seen blocked by the force-release's transaction, so the order is
// fixed, not timed.
func TestExtendBehindForceReleaseFindsItEnded(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	ap := params("raced", 10*time.Second)
	if _, err := p.Acquire(ctx, ap); err != nil {
		t.Fatal(err)
	}
	tx, err := pg.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+postgres.DefaultTable+` WHERE name = $1 FOR UPDATE`, ap.Name); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: ap.Name, Owner: ap.Owner, AtMostFor: 10 * time.Second})
		done <- err
	}()
	pgenv.Blocked(t, ctx, pg.Pool, pid, done)
	inTx, err := postgres.New(tx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inTx.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: ap.Name, By: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, batontype.ErrNotHeld) {
		t.Fatalf("Extend behind the force-release: %v, want ErrNotHeld", err)
	}
	info, err := p.Inspect(ctx, ap.Name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Held {
		t.Errorf("after the force-release and the Extend: held until %v", info.Until)
	}
}
