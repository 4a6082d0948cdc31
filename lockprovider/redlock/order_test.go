package redlock_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/redlock"
)

// holdHook holds the next call of one script on a client until the test
// lets it go, as a loaded machine may delay a goroutine past the return of
// the operation it belongs to.
type holdHook struct {
	hash    string
	armed   atomic.Bool
	entered chan struct{} // closed when the held call reached the client
	let     chan struct{} // closed by release
	held    chan struct{} // closed when the held call was answered
	once    sync.Once
}

// release sends the held call.
func (h *holdHook) release() { h.once.Do(func() { close(h.let) }) }

func newHoldHook(hash string) *holdHook {
	return &holdHook{hash: hash, entered: make(chan struct{}), let: make(chan struct{}), held: make(chan struct{})}
}

func (h *holdHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *holdHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (h *holdHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if a := cmd.Args(); len(a) > 1 && strings.EqualFold(cmd.Name(), "evalsha") && a[1] == h.hash && h.armed.CompareAndSwap(true, false) {
			close(h.entered)
			<-h.let
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
	hook := newHoldHook(goredis.NewScript(string(src)).Hash())
	clients[2].AddHook(hook)
	t.Cleanup(hook.release) // a failed test must not leave the call held
	prefix := testenv.Prefix(t)
	// The held release must still be within its bound when it is let go,
	// however long this test's Acquire takes on a busy machine.
	p, err := redlock.New(clients, &redlock.Config{Prefix: prefix, Timeout: time.Minute})
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
	// Release returned on masters 0 and 1; its call on master 2 may not
	// have reached the client yet.
	select {
	case <-hook.entered:
	case <-time.After(10 * time.Second): // bound of a wait for a goroutine that has nothing else to do
		t.Fatal("the release on master 2 never reached its client")
	}
	l, err := acquire(t, p, name, owner, time.Minute)
	hook.release()
	if err != nil {
		t.Fatalf("Acquire after the release: %v", err)
	}
	<-hook.held
	// Every master holds the new lease once the late release and the calls
	// that waited for it are done.
	key := prefix + "{" + name + "}"
	deadline := time.Now().Add(10 * time.Second)
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
