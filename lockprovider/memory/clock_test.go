package memory_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

// Inside a synctest bubble the default clock is the bubble's, so lease
// boundaries can be checked exactly, without waiting.
func TestSynctestBoundaries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		p := newMemory(t, nil)
		a := lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, AtLeastFor: 10 * time.Second}
		b := a
		b.Owner = lockprovider.NewOwner()

		la, err := p.Acquire(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // synctest: the bubble's fake clock, no real time
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(9*time.Second - time.Nanosecond) // synctest: fake clock
		if _, err := p.Acquire(ctx, b); !errors.Is(err, batontype.ErrNotAcquired) {
			t.Fatalf("1ns before AtLeastUntil: %v, want ErrNotAcquired", err)
		}
		time.Sleep(time.Nanosecond) // synctest: fake clock
		lb, err := p.Acquire(ctx, b)
		if err != nil {
			t.Fatalf("at AtLeastUntil: %v", err)
		}
		if lb.Token != la.Token+1 || !lb.GrantedAt.Equal(la.AtLeastUntil) {
			t.Errorf("takeover lease %+v after %+v", lb, la)
		}

		// Unreleased, b's lease ends exactly at Until.
		time.Sleep(time.Minute - time.Nanosecond)
		if _, err := p.Extend(ctx, lockprovider.ExtendParams{Name: b.Name, Owner: b.Owner, AtMostFor: time.Minute}); err != nil {
			t.Fatalf("Extend 1ns before Until: %v", err)
		}
		time.Sleep(time.Minute) // synctest: fake clock
		if _, err := p.Extend(ctx, lockprovider.ExtendParams{Name: b.Name, Owner: b.Owner, AtMostFor: time.Minute}); !errors.Is(err, batontype.ErrNotHeld) {
			t.Fatalf("Extend at Until: %v, want ErrNotHeld", err)
		}
	})
}

// Config.Now replaces the clock.
func TestConfigNow(t *testing.T) {
	var (
		mu  sync.Mutex
		now = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }

	ctx := context.Background()
	p := newMemory(t, &memory.Config{Now: clock})
	a := lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Hour}
	l, err := p.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if !l.GrantedAt.Equal(clock()) || !l.Until.Equal(clock().Add(time.Hour)) {
		t.Errorf("lease %+v does not use the configured clock %v", l, clock())
	}
	advance(time.Hour)
	info, err := p.Inspect(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if info.Held {
		t.Errorf("Held at Until on the configured clock")
	}
}
