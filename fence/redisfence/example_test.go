package redisfence_test

import (
	"context"
	"errors"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/redisfence"
)

// A configuration value that only the current holder of the lock
// "config:pricing" may write.
func ExampleGuard_Set() {
	ctx := context.Background()
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	guard, err := redisfence.NewGuard(client)
	if err != nil {
		return
	}
	var token int64 = 42 // lock.Token() of the lock named "config:pricing"
	err = guard.Set(ctx, "config:pricing", token, `{"discount": 10}`)
	if errors.Is(err, fence.ErrStaleToken) {
		// The lock passed to another holder while we were paused.
		return
	}
	value, writtenWith, err := guard.Get(ctx, "config:pricing")
	_, _, _ = value, writtenWith, err
}
