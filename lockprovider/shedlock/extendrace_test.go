package shedlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// An Extend that waits behind the owner's own Release (an earlier call
// whose reply was lost, say) must find the lease ended, though it ended
// after the Extend's statement began, and not revive it. The Release runs
// in a transaction that locked the row before the Extend was sent; it
// commits only once the Extend is seen blocked by it, so the order is fixed.
func TestPostgresExtendBehindReleaseFindsItEnded(t *testing.T) {
	t.Parallel()
	cfg := shedlock.PostgresConfig{TimeMode: shedlock.DBTime}
	p, pg := newPG(t, cfg)
	ctx := t.Context()
	a := lockprovider.AcquireParams{Name: "raced", Owner: lockprovider.NewOwner(), AtMostFor: 10 * time.Second}
	if _, err := p.Acquire(ctx, a); err != nil {
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
	if _, err := tx.Exec(ctx, `SELECT 1 FROM shedlock WHERE name = $1 FOR UPDATE`, a.Name); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: 10 * time.Second})
		done <- err
	}()
	pgenv.Blocked(t, ctx, pg.Pool, pid, done)
	inTx, err := shedlock.NewPostgres(tx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := inTx.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inTx.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, batontype.ErrNotHeld) {
		t.Fatalf("Extend behind the release: %v, want ErrNotHeld", err)
	}
	info, err := p.Inspect(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Held {
		t.Errorf("after the release and the Extend: held until %v", info.Until)
	}
}
