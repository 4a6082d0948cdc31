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

func Example() {
	ctx := context.Background()
	p, err := memory.New(nil)
	if err != nil {
		panic(err)
	}

	a := lockprovider.AcquireParams{Name: "report", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}
	lease, err := p.Acquire(ctx, a)
	if err != nil {
		panic(err)
	}
	fmt.Println("granted, fence", lease.Token)

	b := a
	b.Owner = lockprovider.NewOwner()
	_, err = p.Acquire(ctx, b)
	fmt.Println("second owner:", errors.Is(err, batontype.ErrNotAcquired))

	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		panic(err)
	}
	lease, err = p.Acquire(ctx, b)
	fmt.Println("after release, fence", lease.Token, err)
	// Output:
	// granted, fence 1
	// second owner: true
	// after release, fence 2 <nil>
}
