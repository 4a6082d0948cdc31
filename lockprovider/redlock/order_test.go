package redlock_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/redlock"
)

// delayHook holds the next call of one script on a client for a while
// before sending it, as a loaded machine does to a goroutine.
type delayHook struct {
	hash  string
	delay time.Duration
	armed atomic.Bool
	held  chan struct{} // closed when the held call was sent
}

func (h *delayHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *delayHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (h *delayHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if a := cmd.Args(); len(a) > 1 && strings.EqualFold(cmd.Name(), "evalsha") && a[1] == h.hash && h.armed.CompareAndSwap(true, false) {
			time.Sleep(h.delay) // the injected delay of the call under test
			defer close(h.held)
		}
		return next(ctx, cmd)
	}
}

// A caller may acquire again with the owner token it just released. When
// the release reached a master only after the release had returned (it
// settled on the others), it must not delete what the new Acquire takes
// there: through one Provider, an owner's calls on a name reach each
// master in order.
func TestOwnerReuseAfterLateRelease(t *testing.T) {
	src, err := os.ReadFile("release.lua")
	if err != nil {
		t.Fatal(err)
	}
	_, clients := masters(t, 3)
	hook := &delayHook{hash: goredis.NewScript(string(src)).Hash(), delay: 300 * time.Millisecond, held: make(chan struct{})}
	clients[2].AddHook(hook)
	prefix := testenv.Prefix(t)
	p, err := redlock.New(clients, &redlock.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	const name = "reused"
	owner := lockprovider.NewOwner()
	// The first cycle loads the scripts, so the held call is an EVALSHA.
	for i := range 2 {
		if _, err := acquire(t, p, name, owner, time.Minute); err != nil {
			t.Fatalf("Acquire %d: %v", i, err)
		}
		if i == 1 {
			hook.armed.Store(true)
		}
		if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: name, Owner: owner}); err != nil {
			t.Fatalf("Release %d: %v", i, err)
		}
	}
	if hook.armed.Load() {
		t.Fatal("the release on master 2 was not held")
	}
	l, err := acquire(t, p, name, owner, time.Minute)
	if err != nil {
		t.Fatalf("Acquire after the release: %v", err)
	}
	<-hook.held
	// Every master holds the new lease once the late release and the calls
	// that waited for it are done.
	key := prefix + "{" + name + "}"
	deadline := time.Now().Add(5 * time.Second)
	for i, c := range clients {
		for {
			v, err := c.Get(t.Context(), key).Result()
			if err == nil && strings.HasPrefix(v, owner+"\n") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("master %d: lease %q (%v) after the late release, want the new lease of %s", i, v, err, owner)
			}
			time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
		}
	}
	if _, err := p.Extend(t.Context(), lockprovider.ExtendParams{Name: name, Owner: owner, AtMostFor: time.Minute}); err != nil {
		t.Errorf("Extend of the new lease (token %d): %v", l.Token, err)
	}
	if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: name, Owner: owner}); err != nil {
		t.Errorf("Release of the new lease: %v", err)
	}
}
