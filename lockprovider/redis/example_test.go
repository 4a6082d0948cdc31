package redis_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// Compile-only: it needs a Redis server.
func Example() {
	ctx := context.Background()
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()

	p, err := redisprovider.New(rdb, &redisprovider.Config{Prefix: "myapp:"})
	if err != nil {
		panic(err)
	}
	owner := lockprovider.NewOwner()
	lease, err := p.Acquire(ctx, lockprovider.AcquireParams{
		Name: "daily-report", Owner: owner, LockedBy: "host-1", AtMostFor: time.Minute,
	})
	switch {
	case errors.Is(err, batontype.ErrNotAcquired):
		return // another replica holds it
	case err != nil:
		panic(err) // outcome unknown: the lease, if granted, lapses at its expiry
	}
	fmt.Println("fencing token", lease.Token)
	_ = p.Release(ctx, lockprovider.ReleaseParams{Name: "daily-report", Owner: owner})
}
