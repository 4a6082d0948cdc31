package redis_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
)

// Many registrations come and go concurrently on shared and distinct
// names; each one sees the releases made while it is registered. Run with
// -race; TestMain's goleak check fails if a listener outlives its last stop.
func TestNotifyConcurrentRegistrations(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t, redisenv.Client(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Go(func() {
			name := "shared"
			if w%2 == 1 {
				name = "own-" + strconv.Itoa(w)
			}
			for range 5 {
				ch := make(chan struct{}, 1)
				stop, err := p.NotifyRelease(ctx, name, ch)
				if err != nil {
					t.Error(err)
					return
				}
				ap := acquireParams(name)
				for {
					_, err := p.Acquire(ctx, ap)
					if err == nil {
						break
					}
					time.Sleep(time.Millisecond) // another worker holds "shared"
				}
				if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: ap.Owner}); err != nil {
					t.Error(err)
				}
				select {
				case <-ch:
				case <-time.After(5 * time.Second):
					t.Errorf("%s: no signal for our own release", name)
				}
				stop()
				stop()
			}
		})
	}
	wg.Wait()
}

// A registration on a server that does not answer fails (its context ends,
// or go-redis's handshake times out, whichever is later) and leaves nothing
// behind.
func TestNotifyContextCancelled(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond,
		ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	p, _ := newProvider(t, c)
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.NotifyRelease(ctx, "paused", make(chan struct{}, 1)); err == nil {
		t.Fatal("NotifyRelease on a paused server succeeded")
	}
	srv.Resume()
	// The provider still works once the server answers again.
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(t.Context(), "paused", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
}

// After the server restarts (subscriptions and scripts lost), the listener
// reconnects by itself, wakes its waiters once (a release may have gone
// unheard) and announces later releases.
func TestNotifyAfterRestart(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	p, _ := newProvider(t, redisenv.Server(t, srv))
	ctx := t.Context()
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "restart", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after the subscription was re-established")
	}
	ap := acquireParams("restart")
	if _, err := p.Acquire(ctx, ap); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no signal for a release after the restart")
	}
}

// With the server down, NotifyRelease fails instead of waiting for it, even
// under a context without deadline, so a waiter can fall back to polling.
func TestNotifyServerDown(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	p, _ := newProvider(t, redisenv.Server(t, srv))
	srv.Kill()
	if _, err := p.NotifyRelease(t.Context(), "down", make(chan struct{}, 1)); err == nil {
		t.Fatal("NotifyRelease with the server down succeeded")
	}
}
