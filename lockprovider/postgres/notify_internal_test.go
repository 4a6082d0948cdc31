package postgres

import (
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
)

// The listener renews the waiter mark while waiters remain, and the mark
// lapses after the last one stops.
func TestMarkRenewal(t *testing.T) {
	pg := testenv.Postgres(t)
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
		err := pg.Pool.QueryRow(ctx, "SELECT notify_until > clock_timestamp() FROM baton_locks WHERE name = 'm'").Scan(&ok)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "m", ch)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // several times markFor
	if !marked() {
		t.Fatal("mark not renewed while a waiter remains")
	}
	owner := lockprovider.NewOwner()
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "m", Owner: owner, AtMostFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "m", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not signalled after renewals")
	}
	stop()
	time.Sleep(400 * time.Millisecond)
	if marked() {
		t.Error("mark still live after the last waiter stopped and markFor passed")
	}
}
