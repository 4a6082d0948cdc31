package redlock_test

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider/redlock"
)

// A Locker over three independent Redis masters.
func Example() {
	var masters []*goredis.Client
	for _, addr := range []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"} {
		c := goredis.NewClient(&goredis.Options{
			Addr: addr, ContextTimeoutEnabled: true,
			DialerRetries: 1, MaxRetries: -1, DialTimeout: 250 * time.Millisecond,
		})
		defer c.Close()
		masters = append(masters, c)
	}
	provider, err := redlock.New(masters, nil)
	if err != nil {
		panic(err)
	}
	locker, err := baton.NewLocker(provider, nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	lock, err := locker.TryAcquire(ctx, "invoice-run", &baton.AcquireOptions{AtMostFor: 30 * time.Second})
	if err != nil {
		fmt.Println("not acquired:", err)
		return
	}
	defer lock.Release(ctx)
	fmt.Println("token", lock.Token()) // larger than every earlier grant's, on any majority
}
