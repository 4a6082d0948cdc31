package lease_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestMargin(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]time.Duration{
		30 * time.Second:      320 * time.Millisecond,
		time.Second:           30 * time.Millisecond,
		80 * time.Millisecond: 20*time.Millisecond + 800*time.Microsecond,
		40 * time.Millisecond: 10*time.Millisecond + 400*time.Microsecond,
		time.Millisecond:      260 * time.Microsecond,
		batontype.MaxDuration: batontype.MaxDuration/100 + 20*time.Millisecond,
	} {
		if got := lease.Margin(d); got != want {
			t.Errorf("Margin(%v) = %v, want %v", d, got, want)
		}
	}
	for d := time.Millisecond; d < time.Hour; d = d*3/2 + 1 {
		if m := lease.Margin(d); m >= d || m <= 0 {
			t.Fatalf("Margin(%v) = %v: not in (0, d)", d, m)
		}
	}
}

// start acquires name on p and returns its started Lease.
func start(t *testing.T, p lockprovider.Provider, pol lease.Policy, params lease.Params) *lease.Lease {
	t.Helper()
	ctx := context.Background()
	if params.Owner == "" {
		params.Owner = lockprovider.NewOwner()
	}
	sent := time.Now()
	if pol.Now != nil {
		sent = pol.Now()
	}
	grant, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: params.Name, Owner: params.Owner, LockedBy: "test", AtMostFor: params.AtMostFor})
	if err != nil {
		t.Fatal(err)
	}
	pol.Provider = p
	l := new(lease.Lease)
	l.Start(ctx, lease.NewPolicy(pol), params, grant, sent)
	t.Cleanup(func() { _ = l.Release(ctx) })
	return l
}

// A holder whose process was paused, or starved, runs its window's timer
// late. Check must not depend on it: here the clock jumps past the window
// (as it does across a pause) while the timer, counting real time, is far
// from firing. The first Check after the jump reports the loss, cancels
// the context, and is reachable from derived contexts.
func TestCheckDoesNotWaitForTheTimer(t *testing.T) {
	t.Parallel()
	var jump atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(jump.Load())) }
	var lost atomic.Int32
	l := start(t, newMemory(t, nil), lease.Policy{Now: now, Label: "test"}, lease.Params{
		Name: "paused", AtMostFor: time.Minute, OnLost: func(error) { lost.Add(1) },
	})
	type key struct{}
	derived := context.WithValue(l.Context(), key{}, "v")
	if err := l.Check(); err != nil {
		t.Fatalf("Check inside the window: %v", err)
	}
	if err := lease.Check(derived); err != nil {
		t.Fatalf("lease.Check inside the window: %v", err)
	}
	jump.Store(int64(time.Minute))
	if err := lease.Check(derived); !errors.Is(err, batontype.ErrLockLost) {
		t.Fatalf("first check after the window: %v, want ErrLockLost", err)
	}
	if cause := context.Cause(derived); !errors.Is(cause, batontype.ErrLockLost) {
		t.Errorf("context cause after the check: %v", cause)
	}
	if err := l.Check(); !errors.Is(err, batontype.ErrLockLost) {
		t.Errorf("second check: %v", err)
	}
	if n := lost.Load(); n != 1 {
		t.Errorf("OnLost called %d times, want 1", n)
	}
	if err := l.Extend(context.Background(), time.Minute); !errors.Is(err, batontype.ErrLockLost) {
		t.Errorf("Extend after the loss: %v", err)
	}
}

func TestCheckWithoutLease(t *testing.T) {
	t.Parallel()
	if err := lease.Check(context.Background()); err != nil {
		t.Errorf("Check of a context without a lease: %v", err)
	}
	//lint:ignore SA1012 a nil ctx must not panic either
	if err := lease.Check(nil); err != nil {
		t.Errorf("Check(nil): %v", err)
	}
}

func TestZero(t *testing.T) {
	t.Parallel()
	var l lease.Lease
	ctx := context.Background()
	for what, err := range map[string]error{
		"Check": l.Check(), "Extend": l.Extend(ctx, time.Second), "Release": l.Release(ctx), "Err": l.Err(),
	} {
		if !errors.Is(err, lease.ErrZero) || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("zero Lease %s: %v", what, err)
		}
	}
	if !errors.Is(context.Cause(l.Context()), lease.ErrZero) {
		t.Errorf("zero Lease Context cause: %v", context.Cause(l.Context()))
	}
}

func TestLockedBy(t *testing.T) {
	t.Parallel()
	by := lease.LockedBy()
	if by == "" || len(by) > batontype.MaxLockedByLen {
		t.Fatalf("LockedBy() = %q", by)
	}
	err := lockprovider.AcquireParams{Name: "x", Owner: "x", LockedBy: by, AtMostFor: time.Second}.Validate()
	if err != nil {
		t.Errorf("LockedBy() %q is not valid for providers: %v", by, err)
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

// The lease's context is ended by the clock, not only by the window's
// timer: inside a synctest bubble the timer cannot fire while the test
// goroutine runs, so the clock jump below is seen by Err, Done and
// context.Cause alone. The jump stands for a pause of the process.
func TestContextEndsWithTheWindowNotTheTimer(t *testing.T) {
	for _, read := range []struct {
		name string
		ends func(context.Context) bool
	}{
		{"Err", func(ctx context.Context) bool { return ctx.Err() != nil }},
		{"Done", func(ctx context.Context) bool {
			select {
			case <-ctx.Done():
				return true
			default:
				return false
			}
		}},
		{"Cause", func(ctx context.Context) bool { return errors.Is(context.Cause(ctx), batontype.ErrLockLost) }},
	} {
		t.Run(read.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var jump atomic.Int64
				now := func() time.Time { return time.Now().Add(time.Duration(jump.Load())) }
				var lost atomic.Int32
				l := start(t, newMemory(t, nil), lease.Policy{Now: now}, lease.Params{
					Name: "paused", AtMostFor: time.Second, OnLost: func(error) { lost.Add(1) },
				})
				ctx := l.Context()
				if read.ends(ctx) {
					t.Fatal("ended inside the window")
				}
				w := l.TrustedUntil().Sub(now())
				jump.Store(int64(w - time.Nanosecond))
				if read.ends(ctx) {
					t.Fatal("ended a nanosecond before the window's end")
				}
				jump.Store(int64(w))
				if !read.ends(ctx) {
					t.Fatal("still open at the window's end")
				}
				if err := ctx.Err(); !errors.Is(context.Cause(ctx), batontype.ErrLockLost) || err == nil {
					t.Fatalf("after the window: err %v, cause %v", err, context.Cause(ctx))
				}
				if n := lost.Load(); n != 1 {
					t.Errorf("OnLost called %d times, want 1", n)
				}
			})
		})
	}
}

// Auto-renewal keeps the trust window open for as long as the holder
// keeps the lease, whatever the lease length and however the holder's
// looks at it fall, on the fake clock of a synctest bubble: the window
// always ends in the future and the context stays open.
func TestAutoRenewKeepsTheWindowOpen(t *testing.T) {
	for _, seed := range testenv.Seeds(t, 60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(seed), 0))
				d := 50*time.Millisecond + time.Duration(rng.Int64N(int64(10*time.Second)))
				l := start(t, newMemory(t, nil), lease.Policy{}, lease.Params{Name: "renewed", AtMostFor: d, AutoRenew: true})
				end := time.Now().Add(d * time.Duration(2+rng.IntN(20)))
				for time.Now().Before(end) {
					time.Sleep(time.Duration(rng.Int64N(int64(d))))
					if err := l.Check(); err != nil {
						t.Fatalf("SEED=%d: lease %v, %v after start: Check %v", seed, d, time.Until(end), err)
					}
					if err := l.Context().Err(); err != nil {
						t.Fatalf("SEED=%d: lease %v: context ended: %v", seed, d, context.Cause(l.Context()))
					}
					if !l.TrustedUntil().After(time.Now()) {
						t.Fatalf("SEED=%d: lease %v: window ends at %v, not after now", seed, d, l.TrustedUntil())
					}
				}
				if err := l.Release(context.Background()); err != nil {
					t.Fatalf("SEED=%d: Release: %v", seed, err)
				}
			})
		})
	}
}

// slowReply is a provider whose Extend takes effect at once and replies
// only when gate is closed, as behind a network that delays replies.
type slowReply struct {
	lockprovider.Provider
	gate chan struct{}
}

func (p slowReply) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	g, err := p.Provider.Extend(ctx, e)
	<-p.gate
	return g, err
}

// An Extend to a shorter lease ends the trust window where its success
// would, from the send: the backend has applied it while the reply is
// still on its way, and once the shorter lease ends another owner is
// granted the name. Before the fix the holder trusted its old window
// until the reply (seen on the ShedLock MySQL mode: windows of two owners
// overlapping by 27 ms behind a delaying proxy).
func TestShorterExtendEndsTheWindowAtTheSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, nil)
		p := slowReply{Provider: mem, gate: make(chan struct{})}
		l := start(t, p, lease.Policy{}, lease.Params{Name: "shortened", AtMostFor: 10 * time.Second})
		done := make(chan error, 1)
		send := time.Now()
		go func() { done <- l.Extend(context.Background(), time.Second) }()
		defer func() { close(p.gate); <-done }()
		synctest.Wait() // the extension applied, its reply held
		if end := send.Add(time.Second); l.TrustedUntil().After(end) {
			t.Fatalf("window ends %v after the send while the extension to 1s is in flight", l.TrustedUntil().Sub(send))
		}
		time.Sleep(time.Second)
		if _, err := mem.Acquire(context.Background(), lockprovider.AcquireParams{Name: "shortened", Owner: lockprovider.NewOwner(), AtMostFor: time.Second}); err != nil {
			t.Fatalf("another owner after the shortened lease: %v", err)
		}
		if err := l.Check(); !errors.Is(err, batontype.ErrLockLost) {
			t.Errorf("holder's Check while another owner holds the name: %v, want ErrLockLost", err)
		}
	})
}
