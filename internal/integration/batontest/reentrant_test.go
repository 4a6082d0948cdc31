package batontest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
)

// reentrancyProviders are the backends the reentrancy tests run on: the
// nested hold never calls the provider, but the outer lease and the other
// contenders do.
func reentrancyProviders(t *testing.T) map[string]func(t *testing.T) lockprovider.Provider {
	return map[string]func(t *testing.T) lockprovider.Provider{
		"memory":   func(t *testing.T) lockprovider.Provider { return newMemory(t, nil) },
		"redis":    func(t *testing.T) lockprovider.Provider { return redisProvider(t, redisenv.Client(t)) },
		"postgres": func(t *testing.T) lockprovider.Provider { return postgresProvider(t, pgenv.Schema(t).Pool) },
	}
}

func TestReentrant(t *testing.T) {
	t.Parallel()
	for name, newProvider := range reentrancyProviders(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testReentrant(t, newProvider(t))
		})
	}
}

func testReentrant(t *testing.T, p lockprovider.Provider) {
	ctx := context.Background()
	l := newLocker(t, p, nil)
	other := newLocker(t, p, nil)
	outer, err := l.Acquire(ctx, "r", &baton.AcquireOptions{AtMostFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Release(ctx)

	// Acquire, not TryAcquire: without reentrancy it would wait for its own
	// caller until the deadline.
	wctx, cancel := context.WithTimeout(outer.Context(), 5*time.Second)
	defer cancel()
	inner, err := l.Acquire(wctx, "r", nil)
	if err != nil {
		t.Fatalf("nested Acquire: %v", err)
	}
	if inner.Token() != outer.Token() || inner.Name() != "r" || inner.Lease() != outer.Lease() {
		t.Fatalf("nested hold: token %d name %q lease %+v, want the outer's %d %q %+v",
			inner.Token(), inner.Name(), inner.Lease(), outer.Token(), outer.Name(), outer.Lease())
	}
	// A hold nested in the nested one, asking for other options: they do
	// not apply, the shared lease stays as it is.
	inner2, err := l.TryAcquire(inner.Context(), "r", &baton.AcquireOptions{AtMostFor: time.Hour, AutoRenew: true})
	if err != nil {
		t.Fatalf("doubly nested TryAcquire: %v", err)
	}
	if inner2.Token() != outer.Token() || !inner2.Lease().Until.Equal(outer.Lease().Until) {
		t.Fatalf("doubly nested hold: %+v, want the outer lease %+v", inner2.Lease(), outer.Lease())
	}
	// Bad options are still rejected, nested or not.
	_, err = l.TryAcquire(inner.Context(), "r", &baton.AcquireOptions{AtMostFor: -1})
	mustValidation(t, "nested acquire with a negative AtMostFor", err, baton.ErrInvalidDuration)

	// Every other context contends: a plain one, and the holder's context
	// through another Locker.
	if _, err := l.TryAcquire(ctx, "r", nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("TryAcquire with an unrelated context: %v, want ErrNotAcquired", err)
	}
	if _, err := other.TryAcquire(outer.Context(), "r", nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("TryAcquire through another Locker: %v, want ErrNotAcquired", err)
	}

	// Releasing a nested hold ends it alone, and only once.
	for i := range 2 {
		if err := inner.Release(ctx); err != nil {
			t.Fatalf("nested Release #%d: %v", i+1, err)
		}
	}
	if cause := context.Cause(inner.Context()); !errors.Is(cause, baton.ErrReleased) {
		t.Fatalf("released nested hold's Context cause: %v, want ErrReleased", cause)
	}
	if err := inner.Check(); !errors.Is(err, baton.ErrReleased) {
		t.Fatalf("released nested hold's Check: %v", err)
	}
	if err := inner.Extend(ctx, time.Minute); !errors.Is(err, baton.ErrReleased) {
		t.Fatalf("released nested hold's Extend: %v", err)
	}
	if err := outer.Check(); err != nil {
		t.Fatalf("outer lock after the nested Release: %v", err)
	}
	if err := inner2.Check(); err != nil || inner2.Context().Err() != nil {
		t.Fatalf("the other nested hold after a sibling's Release: %v, %v", err, inner2.Context().Err())
	}
	if _, err := other.TryAcquire(ctx, "r", nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("after the nested Release the lease must still be held: %v", err)
	}

	// Extend through a nested hold extends the shared lease.
	before := outer.Lease().Until
	if err := inner2.Extend(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if !outer.Lease().Until.After(before) {
		t.Fatalf("Extend through the nested hold: outer Until %v, was %v", outer.Lease().Until, before)
	}

	// The outer Release ends the lease and every nested hold.
	if err := outer.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if cause := context.Cause(inner2.Context()); !errors.Is(cause, baton.ErrReleased) {
		t.Fatalf("nested hold after the outer Release: cause %v, want ErrReleased", cause)
	}
	if err := inner2.Release(ctx); err != nil {
		t.Fatalf("nested Release after the outer one: %v", err)
	}
	next, err := other.TryAcquire(ctx, "r", nil)
	if err != nil {
		t.Fatalf("after the outer Release: %v", err)
	}
	defer next.Release(ctx)
	if next.Token() <= outer.Token() {
		t.Fatalf("next token %d not above %d", next.Token(), outer.Token())
	}

	// A context carrying the ended hold never reports it held, and does
	// not fall back to contending either.
	k, err := l.TryAcquire(baton.WithLock(ctx, outer), "r", nil)
	if k != nil || !errors.Is(err, baton.ErrReleased) || errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("TryAcquire with a released hold in ctx: %v, %v; want an error matching ErrReleased only", k, err)
	}
}

// A hold lost to expiry ends its nested holds with ErrLockLost, and a
// context that still carries it cannot start a new nested hold.
func TestReentrantLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLocker(t, newMemory(t, nil), nil)
	outer, err := l.TryAcquire(ctx, "r", &baton.AcquireOptions{AtMostFor: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Release(ctx)
	inner, err := l.TryAcquire(outer.Context(), "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	var value fence.Value[string]
	if err := value.WriteContext(inner.Context(), inner.Token(), "inner"); err != nil {
		t.Fatalf("fenced write with the nested hold: %v", err)
	}
	select {
	case <-inner.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("nested hold's Context not cancelled after the outer lease ended")
	}
	if cause := context.Cause(inner.Context()); !errors.Is(cause, baton.ErrLockLost) {
		t.Fatalf("nested hold's cause: %v, want ErrLockLost", cause)
	}
	if err := inner.Check(); !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("nested hold's Check: %v", err)
	}
	if err := value.WriteContext(inner.Context(), inner.Token(), "late"); !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("fenced write with the lost nested hold: %v, want ErrLockLost", err)
	}
	k, err := l.TryAcquire(baton.WithLock(ctx, outer), "r", nil)
	if k != nil || !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("TryAcquire with a lost hold in ctx: %v, %v; want ErrLockLost", k, err)
	}
	// The lock's own (cancelled) Context: the cancellation is reported.
	if _, err := l.TryAcquire(inner.Context(), "r", nil); !errors.Is(err, context.Canceled) || !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("TryAcquire with the lost lock's Context: %v", err)
	}
	if got, _ := value.Read(); got != "inner" {
		t.Fatalf("value %q, want the write made while held", got)
	}
}

// Holds of other names in the same context, WithLock, and nested holds on
// several goroutines at once (run with -race).
func TestReentrantContexts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newMemory(t, nil)
	l := newLocker(t, p, nil)
	outer, err := l.TryAcquire(ctx, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Release(ctx)
	b, err := l.TryAcquire(outer.Context(), "b", nil) // another name: a lock of its own
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release(ctx)
	if b.Token() == outer.Token() && b.Lease().Owner == outer.Lease().Owner {
		t.Fatal("a lock on another name shares the outer lease")
	}
	// b's Context carries both holds.
	nested, err := l.TryAcquire(b.Context(), "a", nil)
	if err != nil || nested.Lease().Owner != outer.Lease().Owner {
		t.Fatalf("nested hold of a through b's Context: %v", err)
	}
	_ = nested.Release(ctx)

	// WithLock: a request context that carries the hold.
	req, cancelReq := context.WithCancel(ctx)
	w, err := l.TryAcquire(baton.WithLock(req, outer), "a", nil)
	if err != nil || w.Lease().Owner != outer.Lease().Owner {
		t.Fatalf("nested hold through WithLock: %v", err)
	}
	cancelReq() // the nested hold lives with the lease, not with req
	if err := w.Check(); err != nil {
		t.Fatalf("nested hold after its acquiring context ended: %v", err)
	}
	_ = w.Release(ctx)
	if got := baton.WithLock(ctx, nil); got != ctx {
		t.Fatal("WithLock(ctx, nil) changed ctx")
	}
	if _, err := l.TryAcquire(baton.WithLock(ctx, &baton.Lock{}), "a", nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("WithLock of a zero Lock: %v, want a plain contender", err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			k, err := l.Acquire(outer.Context(), "a", nil)
			if err != nil {
				errs <- err
				return
			}
			if err := k.Extend(ctx, 20*time.Second); err != nil {
				errs <- err
			}
			if err := k.Check(); err != nil {
				errs <- err
			}
			if k.Token() != outer.Token() {
				errs <- fmt.Errorf("token %d, want %d", k.Token(), outer.Token())
			}
			errs <- k.Release(ctx)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := outer.Check(); err != nil {
		t.Fatalf("outer lock after 16 nested holds came and went: %v", err)
	}
}
