package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

// A call stops before a name already in it: a batch would refuse the
// repeat.
func TestReleasesTakeStopsAtRepeat(t *testing.T) {
	r := &releases{}
	for _, n := range []string{"a", "b", "a", "c"} {
		r.queue = append(r.queue, &pendingRelease{p: lockprovider.ReleaseParams{Name: n}})
	}
	if got := r.take(); got != 2 {
		t.Errorf("take() = %d, want 2 (stop before the repeated a)", got)
	}
	r.queue = r.queue[3:]
	if got := r.take(); got != 1 {
		t.Errorf("take() of one = %d, want 1", got)
	}
}

// Many goroutines releasing at once each get their own lease's answer:
// nil for the holder, ErrNotHeld for a name held by someone else.
func TestReleasesAnswerEach(t *testing.T) {
	p := newMemory(t, nil)
	r := newReleases(p, false, time.Second, 5*time.Second)
	if r == nil {
		t.Fatal("memory provider: no batch releases")
	}
	ctx := context.Background()
	const n = 500
	var wg sync.WaitGroup
	for i := range n {
		name := fmt.Sprintf("answer-%d", i)
		owner := lockprovider.NewOwner()
		if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: time.Minute}); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if i%5 == 0 { // not the holder
				if err := r.release(ctx, lockprovider.ReleaseParams{Name: name, Owner: lockprovider.NewOwner()}, nil); !errors.Is(err, batontype.ErrNotHeld) {
					t.Errorf("%s: release by a non-holder: %v, want ErrNotHeld", name, err)
				}
				return
			}
			if err := r.release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}, nil); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		info, err := p.Inspect(ctx, fmt.Sprintf("answer-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if info.Held != (i%5 == 0) {
			t.Errorf("answer-%d: held = %v after the releases", i, info.Held)
		}
	}
	if r.busy || len(r.queue) != 0 {
		t.Errorf("after the releases: busy %v, %d queued; want idle", r.busy, len(r.queue))
	}
}

// A release waits while batch claims are in flight, until they are
// answered or for maxDefer at the most.
func TestReleasesDeferToClaims(t *testing.T) {
	p := newMemory(t, nil)
	ctx := context.Background()
	hold := func(name string) lockprovider.ReleaseParams {
		owner := lockprovider.NewOwner()
		if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: time.Minute}); err != nil {
			t.Fatal(err)
		}
		return lockprovider.ReleaseParams{Name: name, Owner: owner}
	}
	r := newReleases(p, false, time.Hour, 5*time.Second)
	answered := r.claiming()
	done := make(chan error, 1)
	go func() { done <- r.release(ctx, hold("deferred"), nil) }()
	select {
	case err := <-done:
		t.Fatalf("release sent while a batch claim was in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	answered()
	answered() // a second call changes nothing
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r.claims != 0 {
		t.Errorf("claims in flight = %d after the answer, want 0", r.claims)
	}

	bounded := newReleases(p, false, 10*time.Millisecond, 5*time.Second)
	bounded.claiming() // never answered
	if err := bounded.release(ctx, hold("bounded"), nil); err != nil {
		t.Fatal(err)
	}
	var none *releases
	none.claiming()() // a provider without batch releases
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
