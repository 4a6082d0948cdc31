package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

// Claiming many names for one tick in one call: each item is answered as
// Acquire would answer it.
func ExampleProvider_AcquireBatch() {
	ctx := context.Background()
	p, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	tick := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	item := func(name string) lockprovider.AcquireParams {
		return lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: tick}
	}
	// Another replica already ran tenant-2's 02:00 tick.
	if _, err := p.Acquire(ctx, item("tenant-2")); err != nil {
		panic(err)
	}

	var ba lockprovider.BatchAcquirer = p
	res, err := ba.AcquireBatch(ctx, []lockprovider.AcquireParams{item("tenant-1"), item("tenant-2"), item("tenant-3")})
	if err != nil {
		panic(err) // only an oversized batch fails as a whole
	}
	for _, r := range res {
		switch {
		case r.Err == nil:
			fmt.Println(r.Lease.Name, "granted, token", r.Lease.Token)
		case errors.Is(r.Err, batontype.ErrNotAcquired):
			fmt.Println("held elsewhere")
		}
	}
	// Output:
	// tenant-1 granted, token 1
	// held elsewhere
	// tenant-3 granted, token 1
}
