package baton_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider/memory"
)

// A function that locks an account calls, while holding that lock, another
// that locks the same account. Passing the lock's Context down makes the
// inner acquire a nested hold on the same lease instead of a wait for the
// caller's own lock; a context that does not carry the lock still contends.
func ExampleLocker_Acquire_nested() {
	ctx := context.Background()
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	locker, _ := baton.NewLocker(provider, nil)

	debit := func(ctx context.Context, account string) error {
		lock, err := locker.Acquire(ctx, "account:"+account, &baton.AcquireOptions{AtMostFor: 10 * time.Second})
		if err != nil {
			return err
		}
		defer lock.Release(ctx) // a nested hold's Release leaves the lease held
		fmt.Println("debit under token", lock.Token())
		return nil
	}
	transfer := func(ctx context.Context, account string) error {
		lock, err := locker.Acquire(ctx, "account:"+account, nil)
		if err != nil {
			return err
		}
		defer lock.Release(ctx) // the outermost Release ends the lease
		fmt.Println("transfer under token", lock.Token())
		return debit(lock.Context(), account)
	}

	if err := transfer(ctx, "42"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// transfer under token 1
	// debit under token 1
}

// WithLock passes a hold down a call tree that runs under another context,
// such as an HTTP request's: the callee's acquire of the same name is a
// nested hold, while the request's cancellation stays the request's.
func ExampleWithLock() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	locker, _ := baton.NewLocker(provider, nil)
	request, cancel := context.WithCancel(context.Background())
	defer cancel()

	lock, _ := locker.TryAcquire(request, "report:7", nil)
	defer lock.Release(request)

	ctx := baton.WithLock(request, lock)
	inner, err := locker.TryAcquire(ctx, "report:7", nil) // nested: no wait, no contention
	fmt.Println(err, inner.Token() == lock.Token())
	_ = inner.Release(ctx)

	_, err = locker.TryAcquire(request, "report:7", nil) // the request alone does not carry it
	fmt.Println(errors.Is(err, baton.ErrNotAcquired))
	// Output:
	// <nil> true
	// true
}
