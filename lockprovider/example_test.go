package lockprovider_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

// The contract every provider keeps, shown on the in-memory reference:
// exclusive grants, owner-checked release, increasing fencing tokens and
// tick identity.
func Example() {
	ctx := context.Background()
	mem, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	var p lockprovider.Provider = mem // or a Redis or PostgreSQL provider

	a := lockprovider.AcquireParams{Name: "report", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}
	first, err := p.Acquire(ctx, a)
	fmt.Println("a acquires:", err)

	b := a
	b.Owner = lockprovider.NewOwner()
	_, err = p.Acquire(ctx, b)
	fmt.Println("b while a holds:", errors.Is(err, batontype.ErrNotAcquired))

	err = p.Release(ctx, lockprovider.ReleaseParams{Name: "report", Owner: b.Owner})
	fmt.Println("b releases a's lease:", errors.Is(err, batontype.ErrNotHeld))

	_ = p.Release(ctx, lockprovider.ReleaseParams{Name: "report", Owner: a.Owner})
	second, _ := p.Acquire(ctx, b)
	fmt.Println("b after a released, larger token:", second.Token > first.Token)

	// Tick identity: a tick is granted once per name.
	tick := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := lockprovider.AcquireParams{Name: "daily", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: tick}
	_, _ = p.Acquire(ctx, c)
	_ = p.Release(ctx, lockprovider.ReleaseParams{Name: "daily", Owner: c.Owner})
	c.Owner = lockprovider.NewOwner() // a replica that fired late
	_, err = p.Acquire(ctx, c)
	fmt.Println("same tick again:", errors.Is(err, batontype.ErrStaleTick))

	// Bad input is a typed error, never a panic or a clamp.
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "x", Owner: "o", AtMostFor: time.Second, AtLeastFor: time.Hour})
	var verr *batontype.ValidationError
	fmt.Println("atLeastFor > atMostFor:", errors.Is(err, batontype.ErrInvalidDuration), errors.As(err, &verr) && verr.Field == "AtLeastFor")
	// Output:
	// a acquires: <nil>
	// b while a holds: true
	// b releases a's lease: true
	// b after a released, larger token: true
	// same tick again: true
	// atLeastFor > atMostFor: true true
}
