package history_test

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/memory"
)

// Record two clients' operations on a memory provider and check them.
func Example() {
	mem, _ := memory.New(nil)
	h := history.New()
	a, b := h.Provider(mem, 0), h.Provider(mem, 1)
	ctx := context.Background()

	owner := lockprovider.NewOwner()
	call := time.Now()
	l, _ := a.Acquire(ctx, lockprovider.AcquireParams{Name: "report", Owner: owner, AtMostFor: time.Minute})
	h.Window(0, "report", owner, l.Token, call, time.Now())
	_, err := b.Acquire(ctx, lockprovider.AcquireParams{Name: "report", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
	fmt.Println("second client:", err)
	_ = a.Release(ctx, lockprovider.ReleaseParams{Name: "report", Owner: owner})

	r := history.Check(h, history.Config{})
	fmt.Println("ok:", r.OK(), "operations:", r.Ops)
	// Output:
	// second client: lock held by another owner
	// ok: true operations: 3
}
