package postgres

import (
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
)

// The listener renews the waiter mark while waiters remain, and the mark
// lapses after the last one stops.
func TestMarkRenewal(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	p, err := New(pg.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	p.listen.markFor, p.listen.markEvery = 300*time.Millisecond, 100*time.Millisecond
	marked := func() bool {
		var ok bool
		err := pg.Pool.QueryRow(ctx, "SELECT until > clock_timestamp() FROM baton_locks_waiters WHERE name = 'm'").Scan(&ok)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	until := func() time.Time {
		var u time.Time
		if err := pg.Pool.QueryRow(ctx, "SELECT until FROM baton_locks_waiters WHERE name = 'm'").Scan(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "m", ch)
	if err != nil {
		t.Fatal(err)
	}
	// renewed reports whether the mark was renewed since NotifyRelease
	// wrote it. Whether it is live at one instant would depend on how
	// late a busy machine runs the renewal.
	first := until()
	renewed := func() bool { return until().After(first) }
	owner := lockprovider.NewOwner()
	// A lease is held while marks are renewed: renewals never lock the
	// lease row, so acquires by others are refused only for being held,
	// and the holder's operations never collide with them.
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "m", Owner: owner, AtMostFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); { // several times markFor
		if _, err := p.Extend(ctx, lockprovider.ExtendParams{Name: "m", Owner: owner, AtMostFor: time.Minute}); err != nil {
			t.Fatalf("Extend during mark renewals: %v", err)
		}
		time.Sleep(5 * time.Millisecond) // pace the extends across several renewals
	}
	for deadline := time.Now().Add(10 * time.Second); !renewed(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("mark not renewed while a waiter remains")
		}
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "m", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not signalled after renewals")
	}
	// Acquires of the free name keep succeeding across renewals.
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
		owner = lockprovider.NewOwner()
		if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "m", Owner: owner, AtMostFor: time.Minute}); err != nil {
			t.Fatalf("Acquire of a free name during mark renewals: %v", err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "m", Owner: owner}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("waiter not signalled after renewals")
		}
	}
	stop()
	time.Sleep(400 * time.Millisecond) // markFor (300 ms) passes with no renewal
	if marked() {
		t.Error("mark still live after the last waiter stopped and markFor passed")
	}
}
