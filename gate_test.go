package baton

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider/memory"
)

// Waiters of one name queue in-process; the release registration lives while
// any of them remains and is dropped with the last, also when waiters give
// up while queued.
func TestGateLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := NewLocker(newMemory(t, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	held, err := l.TryAcquire(ctx, "g", nil)
	if err != nil {
		t.Fatal(err)
	}
	gates := func() (n int, registered, held bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if g := l.gates["g"]; g != nil {
			return g.n, g.stop != nil, g.held
		}
		return 0, false, false
	}

	short, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	locks := make([]*Lock, 3)
	for i := range 3 {
		c := ctx
		if i > 0 {
			c = short // two of them give up, queued or active
		}
		wg.Go(func() { locks[i], errs[i] = l.Acquire(c, "g", nil) })
	}
	// Wait, too, until the backend has answered the waiter in turn that
	// the lock is held: a waiter gives up matching ErrNotAcquired only
	// when a backend said so, and on a loaded machine the first attempt
	// may still be on its way when the others are all queued.
	for {
		if n, reg, held := gates(); n == 3 && reg && held {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	for {
		if n, _, _ := gates(); n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, reg, _ := gates(); !reg {
		t.Errorf("registration dropped while a waiter remains")
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := 1; i < 3; i++ {
		if !errors.Is(errs[i], ErrNotAcquired) || !errors.Is(errs[i], context.Canceled) {
			t.Errorf("waiter %d: %v", i, errs[i])
		}
	}
	if errs[0] != nil {
		t.Fatalf("patient waiter: %v", errs[0])
	}
	_ = locks[0].Release(ctx)
	if n, reg, _ := gates(); n != 0 || reg {
		t.Errorf("after the last waiter: %d waiters, registered %v", n, reg)
	}
}

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
