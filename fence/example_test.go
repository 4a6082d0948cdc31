package fence_test

import (
	"errors"
	"fmt"

	"github.com/baton-go/baton/fence"
)

// A holder paused past its lease comes back with an older token than the
// holder that took over; its write is refused.
func ExampleValue() {
	var balance fence.Value[int]

	// Holder A got token 33 and paused; the lease passed to B, token 34.
	fmt.Println(balance.Write(34, 120))
	err := balance.Write(33, 100) // A wakes up and writes
	fmt.Println(errors.Is(err, fence.ErrStaleToken))
	v, tok := balance.Read()
	fmt.Println(v, tok)
	// Output:
	// <nil>
	// true
	// 120 34
}

func ExampleResource() {
	var mailer fence.Resource
	send := func(token int64, to string) error {
		return mailer.Do(token, func() error {
			fmt.Println("sending to", to, "with token", token)
			return nil
		})
	}
	_ = send(7, "ops@example.com")
	_ = send(7, "dev@example.com") // the same grant may act again
	err := send(6, "ops@example.com")
	fmt.Println(err)
	// Output:
	// sending to ops@example.com with token 7
	// sending to dev@example.com with token 7
	// fence: stale fencing token: token 6, resource has seen 7
}
