package baton_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/ratelimit"
)

// A common pattern: a per-customer lock that skips the sync when another
// replica is already running it, and a rate limit on the third-party API the
// sync calls. One provider serves both.
func Example() {
	ctx := context.Background()
	provider, err := memory.New(nil) // lockprovider/redis or /postgres in production
	if err != nil {
		panic(err)
	}
	replicaA, _ := baton.NewLocker(provider, &baton.Config{LockedBy: "replica-a"})
	replicaB, _ := baton.NewLocker(provider, &baton.Config{LockedBy: "replica-b"})
	// The API allows bursts of 2 calls, refilled at 2 a minute.
	api, _ := ratelimit.New(provider, []ratelimit.Limit{{Algorithm: ratelimit.TokenBucket, Rate: 2, Period: time.Minute, Burst: 2}}, nil)

	syncCustomer := func(locker *baton.Locker, id string) {
		// 1. Avoid duplicate concurrent syncs of one customer.
		lock, err := locker.TryAcquire(ctx, "sync:customer:"+id, &baton.AcquireOptions{AtMostFor: 30 * time.Second})
		if errors.Is(err, baton.ErrNotAcquired) {
			fmt.Println("customer", id+": already syncing elsewhere, skipped")
			return
		}
		if err != nil {
			fmt.Println("customer", id+":", err)
			return
		}
		defer lock.Release(ctx)
		// 2. Respect the third-party API's quota.
		res, err := api.Allow(ctx, "third-party-api")
		if err != nil || !res.Allowed {
			fmt.Println("customer", id+": API quota exhausted, retry later")
			return
		}
		// Call the API with lock.Context(), so the call stops if the
		// lock is lost, and pass lock.Token() to anything that can
		// check it (package fence).
		fmt.Println("customer", id+": syncing, token", lock.Token())
	}

	held, _ := replicaA.TryAcquire(ctx, "sync:customer:42", nil)
	syncCustomer(replicaB, "42")
	syncCustomer(replicaB, "7")
	_ = held.Release(ctx)
	syncCustomer(replicaB, "42")
	syncCustomer(replicaB, "9")
	// Output:
	// customer 42: already syncing elsewhere, skipped
	// customer 7: syncing, token 1
	// customer 42: syncing, token 2
	// customer 9: API quota exhausted, retry later
}

func ExampleLocker_Acquire() {
	ctx := context.Background()
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	locker, _ := baton.NewLocker(provider, nil)

	first, _ := locker.Acquire(ctx, "report", nil)
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = first.Release(ctx)
	}()
	// Waits for the release: woken by the provider's notification.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	second, err := locker.Acquire(wctx, "report", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Release(ctx)
	fmt.Println(first.Token(), second.Token())
	// Output:
	// 1 2
}

// Work under a lock should watch Lock.Context: it ends when the lease is
// lost, here because nothing extends it.
func ExampleLock_Context() {
	ctx := context.Background()
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	locker, _ := baton.NewLocker(provider, nil)
	lock, _ := locker.TryAcquire(ctx, "rebuild-index", &baton.AcquireOptions{AtMostFor: 50 * time.Millisecond})
	defer lock.Release(ctx)

	select {
	case <-lock.Context().Done():
		cause := context.Cause(lock.Context())
		fmt.Println(errors.Is(cause, baton.ErrLockLost), cause)
	case <-time.After(10 * time.Second): // the job's work
		fmt.Println("finished")
	}
	// Output:
	// true lock lost: trust window ended
}

// With AutoRenew the lease outlives its TTL for as long as the job runs.
func ExampleAcquireOptions_autoRenew() {
	ctx := context.Background()
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	locker, _ := baton.NewLocker(provider, nil)
	lock, _ := locker.TryAcquire(ctx, "migrate", &baton.AcquireOptions{AtMostFor: time.Second, AutoRenew: true})

	time.Sleep(1500 * time.Millisecond) // a job longer than the TTL
	_, err = locker.TryAcquire(ctx, "migrate", nil)
	fmt.Println(lock.Context().Err(), errors.Is(err, baton.ErrNotAcquired))
	_ = lock.Release(ctx)
	fmt.Println(context.Cause(lock.Context()))
	// Output:
	// <nil> true
	// baton: lock released
}
