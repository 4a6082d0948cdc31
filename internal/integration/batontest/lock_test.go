package batontest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

func newLocker(t *testing.T, p lockprovider.Provider, cfg *baton.Config) *baton.Locker {
	t.Helper()
	l, err := baton.NewLocker(p, cfg)
	if err != nil {
		t.Fatalf("NewLocker: %v", err)
	}
	return l
}

func mustValidation(t *testing.T, what string, err error, sentinel error) {
	t.Helper()
	var ve *baton.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, sentinel) || !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("%s: got %v, want a *ValidationError matching %v", what, err, sentinel)
	}
}

func TestNewLockerBadInput(t *testing.T) {
	t.Parallel()
	if _, err := baton.NewLocker(nil, nil); !errors.Is(err, baton.ErrNilProvider) || !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("nil provider: got %v", err)
	}
	p := newMemory(t, nil)
	for name, cfg := range map[string]baton.Config{
		"negative TTL":            {AtMostFor: -time.Second},
		"TTL too long":            {AtMostFor: batontype.MaxDuration + 1},
		"negative margin":         {SafetyMargin: -1},
		"negative min backoff":    {MinBackoff: -1},
		"negative max backoff":    {MaxBackoff: -1},
		"min above max backoff":   {MinBackoff: time.Second, MaxBackoff: time.Millisecond},
		"negative releaseTimeout": {ReleaseTimeout: -1},
	} {
		cfg := cfg
		_, err := baton.NewLocker(p, &cfg)
		mustValidation(t, name, err, baton.ErrInvalidDuration)
	}
	_, err := baton.NewLocker(p, &baton.Config{LockedBy: "host\n1"})
	mustValidation(t, "control character in LockedBy", err, baton.ErrInvalid)

	var nilLocker *baton.Locker
	if _, err := nilLocker.TryAcquire(context.Background(), "x", nil); !errors.Is(err, baton.ErrNilProvider) {
		t.Errorf("nil Locker: got %v", err)
	}
	var nilLock *baton.Lock
	if err := nilLock.Release(context.Background()); err != nil {
		t.Errorf("nil Lock Release: %v", err)
	}
}

func TestAcquireBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLocker(t, newMemory(t, nil), nil)
	cases := []struct {
		name     string
		lock     string
		opts     *baton.AcquireOptions
		sentinel error
	}{
		{"empty name", "", nil, baton.ErrInvalidName},
		{"long name", strings.Repeat("n", batontype.MaxNameLen+1), nil, baton.ErrInvalidName},
		{"control character", "a\x00b", nil, baton.ErrInvalidName},
		{"invalid UTF-8", "a\xffb", nil, baton.ErrInvalidName},
		{"negative TTL", "x", &baton.AcquireOptions{AtMostFor: -time.Second}, baton.ErrInvalidDuration},
		{"negative AtLeastFor", "x", &baton.AcquireOptions{AtLeastFor: -time.Second}, baton.ErrInvalidDuration},
		{"AtLeastFor above TTL", "x", &baton.AcquireOptions{AtMostFor: time.Second, AtLeastFor: 2 * time.Second}, baton.ErrInvalidDuration},
		{"LockedBy too long", "x", &baton.AcquireOptions{LockedBy: strings.Repeat("h", 300)}, baton.ErrInvalid},
	}
	for _, c := range cases {
		_, err := l.TryAcquire(ctx, c.lock, c.opts)
		mustValidation(t, "TryAcquire "+c.name, err, c.sentinel)
		_, err = l.Acquire(ctx, c.lock, c.opts)
		mustValidation(t, "Acquire "+c.name, err, c.sentinel)
	}

	// The default margin is always below the lease, so a 1ms lease is
	// valid input (under load its grant may still come back after its
	// window); a configured margin may not be, and a lease it would
	// swallow is refused.
	if lock, err := l.TryAcquire(ctx, "short", &baton.AcquireOptions{AtMostFor: time.Millisecond}); errors.Is(err, baton.ErrInvalid) {
		t.Errorf("1ms lease with the default margin: %v", err)
	} else if err == nil {
		_ = lock.Release(ctx)
	}
	lm := newLocker(t, newMemory(t, nil), &baton.Config{SafetyMargin: 10 * time.Millisecond})
	_, err := lm.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: 10 * time.Millisecond})
	mustValidation(t, "TryAcquire TTL not above the safety margin", err, baton.ErrInvalidDuration)
	_, err = lm.Acquire(ctx, "x", &baton.AcquireOptions{AtMostFor: 10 * time.Millisecond})
	mustValidation(t, "Acquire TTL not above the safety margin", err, baton.ErrInvalidDuration)

	lock, err := l.TryAcquire(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release(ctx)
	for _, d := range []time.Duration{0, -time.Second, batontype.MaxDuration + 1} {
		mustValidation(t, "Extend "+d.String(), lock.Extend(ctx, d), baton.ErrInvalidDuration)
	}
	lockm, err := lm.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer lockm.Release(ctx)
	mustValidation(t, "Extend not above the safety margin", lockm.Extend(ctx, 10*time.Millisecond), baton.ErrInvalidDuration)
}

func TestTryAcquireRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLocker(t, newMemory(t, nil), nil)

	a, err := l.TryAcquire(ctx, "job", &baton.AcquireOptions{AtMostFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "job" || a.Token() <= 0 {
		t.Fatalf("name %q token %d", a.Name(), a.Token())
	}
	if left := time.Until(a.TrustedUntil()); left < 58*time.Second || left > time.Minute {
		t.Errorf("trust window ends in %v, want just under 1m", left)
	}
	if _, err := l.TryAcquire(ctx, "job", nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("second TryAcquire: %v, want ErrNotAcquired", err)
	}
	if err := a.Context().Err(); err != nil {
		t.Fatalf("Context done while held: %v", err)
	}

	// Release works on a cancelled context and is idempotent.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Release(cctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if !errors.Is(context.Cause(a.Context()), baton.ErrReleased) {
		t.Errorf("Context cause after Release: %v", context.Cause(a.Context()))
	}
	if err := a.Extend(ctx, time.Minute); !errors.Is(err, baton.ErrReleased) {
		t.Errorf("Extend after Release: %v", err)
	}

	b, err := l.TryAcquire(ctx, "job", nil)
	if err != nil {
		t.Fatalf("TryAcquire after Release: %v", err)
	}
	defer b.Release(ctx)
	if b.Token() <= a.Token() {
		t.Errorf("token %d after %d: not increasing", b.Token(), a.Token())
	}
}

func TestContextCarriesValues(t *testing.T) {
	t.Parallel()
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	l := newLocker(t, newMemory(t, nil), nil)
	lock, err := l.TryAcquire(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the acquiring context ends; the lock does not
	if lock.Context().Value(key{}) != "v" || lock.Context().Err() != nil {
		t.Errorf("lock context: value %v err %v", lock.Context().Value(key{}), lock.Context().Err())
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAtLeastFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l := newLocker(t, newMemory(t, nil), nil)
		a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: 10 * time.Second, AtLeastFor: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := l.TryAcquire(ctx, "x", nil); !errors.Is(err, baton.ErrNotAcquired) {
			t.Fatalf("inside AtLeastFor: %v, want ErrNotAcquired", err)
		}
		start := time.Now()
		b, err := l.Acquire(ctx, "x", nil)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < 2*time.Second {
			t.Errorf("acquired %v after release; AtLeastFor left 2s", waited)
		}
		_ = b.Release(ctx)
	})
}

func TestAcquireWaitsForRelease(t *testing.T) {
	t.Parallel()
	for _, notify := range []bool{true, false} {
		name := map[bool]string{true: "notify", false: "poll"}[notify]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l := newLocker(t, newMemory(t, nil), &baton.Config{DisableNotify: !notify})
			a, err := l.TryAcquire(ctx, "x", nil)
			if err != nil {
				t.Fatal(err)
			}
			var released atomic.Bool
			go func() {
				time.Sleep(20 * time.Millisecond)
				released.Store(true)
				_ = a.Release(ctx)
			}()
			b, err := l.Acquire(ctx, "x", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !released.Load() || b.Token() <= a.Token() {
				t.Errorf("granted before release (%v) or token %d not above %d", released.Load(), b.Token(), a.Token())
			}
			_ = b.Release(ctx)
		})
	}
}

// Expiry is not announced: a waiter finds it by polling, with or without
// notifications.
func TestAcquireFindsExpiry(t *testing.T) {
	for _, notify := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			l := newLocker(t, newMemory(t, nil), &baton.Config{DisableNotify: !notify, MaxBackoff: 200 * time.Millisecond})
			a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			b, err := l.Acquire(ctx, "x", nil)
			if err != nil {
				t.Fatal(err)
			}
			waited := time.Since(start)
			if waited < 5*time.Second || waited > 5*time.Second+200*time.Millisecond {
				t.Errorf("acquired after %v; lease expired after 5s, polls at most every 200ms", waited)
			}
			if !errors.Is(context.Cause(a.Context()), baton.ErrLockLost) {
				t.Errorf("expired holder's Context cause: %v", context.Cause(a.Context()))
			}
			_ = a.Release(ctx)
			_ = b.Release(ctx)
		})
	}
}

// countingProvider counts calls; it wraps a real provider.
type countingProvider struct {
	lockprovider.Provider
	acquires atomic.Int64
}

func (c *countingProvider) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	c.acquires.Add(1)
	return c.Provider.Acquire(ctx, p)
}

func TestAcquireBackoffIsNotAHotLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := &countingProvider{Provider: newMemory(t, nil)}
		l := newLocker(t, p, &baton.Config{MinBackoff: 10 * time.Millisecond, MaxBackoff: time.Second})
		a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err = l.Acquire(wctx, "x", nil)
		if !errors.Is(err, baton.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, baton.ErrDeadlineTooSoon) {
			t.Fatalf("Acquire past deadline: %v", err)
		}
		// Doubling from 10ms with jitter to a 1s cap: about 7 polls to
		// reach the cap, then one per 0.5-1s for the rest of the 30s.
		if n := p.acquires.Load() - 1; n < 30 || n > 75 {
			t.Errorf("%d attempts in 30s of waiting", n)
		}
		_ = a.Release(ctx)
	})
}

// slowProvider delays every acquire and extend before passing it on: a
// slow network.
type slowProvider struct {
	lockprovider.Provider
	delay time.Duration
}

func (s *slowProvider) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	time.Sleep(s.delay)
	return s.Provider.Acquire(ctx, p)
}

func (s *slowProvider) Extend(ctx context.Context, p lockprovider.ExtendParams) (batontype.Lease, error) {
	time.Sleep(s.delay)
	return s.Provider.Extend(ctx, p)
}

func TestAcquireFailsEarlyOnShortDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := &countingProvider{Provider: &slowProvider{Provider: newMemory(t, nil), delay: 50 * time.Millisecond}}
		l := newLocker(t, p, nil)
		a, err := l.TryAcquire(ctx, "x", nil) // measures the round trip: 50ms
		if err != nil {
			t.Fatal(err)
		}

		// Answered "held" twice (at 50ms and about 105ms), then 15ms are
		// left, less than a round trip: it gives up before the deadline,
		// saying that the backend found the lock held.
		before := p.acquires.Load()
		dctx, cancel := context.WithTimeout(ctx, 120*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = l.Acquire(dctx, "x", nil)
		if !errors.Is(err, baton.ErrDeadlineTooSoon) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, baton.ErrNotAcquired) {
			t.Fatalf("deadline too soon for another round trip: %v", err)
		}
		if d := time.Since(start); d >= 120*time.Millisecond || p.acquires.Load()-before != 2 {
			t.Errorf("gave up after %v and %d calls; want 2 calls, before the deadline", d, p.acquires.Load()-before)
		}

		// A deadline shorter than a round trip still gets its one try:
		// the name may be free. No answer came in time, so the error
		// does not claim the lock is held.
		before = p.acquires.Load()
		sctx, cancel1 := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel1()
		if _, err := l.Acquire(sctx, "x", nil); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, baton.ErrNotAcquired) {
			t.Errorf("deadline shorter than a round trip: %v", err)
		}
		if n := p.acquires.Load() - before; n != 1 {
			t.Errorf("%d calls with a deadline shorter than a round trip; want 1", n)
		}

		// A passed deadline: no call, and no claim that the lock is held.
		before = p.acquires.Load()
		past, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel2()
		if _, err := l.Acquire(past, "y", nil); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, baton.ErrNotAcquired) {
			t.Errorf("deadline passed: %v", err)
		}
		if p.acquires.Load() != before {
			t.Errorf("a passed deadline still called the provider")
		}
		_ = a.Release(ctx)
	})
}

// refusedProvider closes refused once an Acquire has been answered "held".
type refusedProvider struct {
	lockprovider.Provider
	refused chan struct{}
	once    sync.Once
}

func (r *refusedProvider) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	l, err := r.Provider.Acquire(ctx, p)
	if errors.Is(err, batontype.ErrNotAcquired) {
		r.once.Do(func() { close(r.refused) })
	}
	return l, err
}

func TestAcquireCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := &refusedProvider{Provider: newMemory(t, nil), refused: make(chan struct{})}
	l := newLocker(t, p, nil)
	a, err := l.TryAcquire(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	cctx, cancel := context.WithCancelCause(ctx)
	stop := errors.New("shutting down")
	// Cancelled once the backend has answered the wait "held" (ErrNotAcquired
	// is promised only then; a fixed delay may come first on a busy machine).
	go func() { <-p.refused; cancel(stop) }()
	if _, err := l.Acquire(cctx, "x", nil); !errors.Is(err, baton.ErrNotAcquired) || !errors.Is(err, stop) {
		t.Errorf("cancelled Acquire: %v", err)
	}
}

func TestExtend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l := newLocker(t, newMemory(t, nil), nil)
		a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(800 * time.Millisecond)
		if err := a.Extend(ctx, 3*time.Second); err != nil {
			t.Fatal(err)
		}
		// The window restarts at the Extend: 3s minus the margin (1%
		// plus 20ms).
		if want := time.Now().Add(3*time.Second - 50*time.Millisecond); !a.TrustedUntil().Equal(want) {
			t.Errorf("Until %v, want %v", a.TrustedUntil(), want)
		}
		time.Sleep(2 * time.Second) // past the original TTL
		if a.Context().Err() != nil {
			t.Fatalf("lost after Extend: %v", context.Cause(a.Context()))
		}
		if _, err := l.TryAcquire(ctx, "x", nil); !errors.Is(err, baton.ErrNotAcquired) {
			t.Fatalf("extended lease taken: %v", err)
		}
		// Shorter is allowed too.
		if err := a.Extend(ctx, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if !errors.Is(context.Cause(a.Context()), baton.ErrLockLost) {
			t.Errorf("cause after the window: %v", context.Cause(a.Context()))
		}
		if err := a.Extend(ctx, time.Second); !errors.Is(err, baton.ErrLockLost) {
			t.Errorf("Extend after loss: %v", err)
		}
		if err := a.Release(ctx); !errors.Is(err, baton.ErrNotHeld) {
			t.Errorf("Release of an expired lease: %v, want ErrNotHeld", err)
		}
		if err := a.Release(ctx); err != nil {
			t.Errorf("second Release: %v", err)
		}
	})
}

func TestExtendFindsLeaseGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The backend's clock jumps ahead (a server clock step): the lease
	// ends on the server while the local trust window is still open.
	var skew atomic.Int64
	p := newMemory(t, &memory.Config{Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	l := newLocker(t, p, nil)
	a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	skew.Store(int64(2 * time.Minute))
	err = a.Extend(ctx, time.Minute)
	if !errors.Is(err, baton.ErrLockLost) || !errors.Is(err, baton.ErrNotHeld) {
		t.Fatalf("Extend of a lease gone on the server: %v", err)
	}
	cause := context.Cause(a.Context())
	if !errors.Is(cause, baton.ErrLockLost) || !errors.Is(cause, baton.ErrNotHeld) {
		t.Errorf("Context cause: %v", cause)
	}
}

func TestTrustWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := &slowProvider{Provider: newMemory(t, nil), delay: 100 * time.Millisecond}
		l := newLocker(t, p, &baton.Config{SafetyMargin: 10 * time.Millisecond})
		sent := time.Now()
		a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// Anchored at the send, not at the answer 100ms later.
		if want := sent.Add(990 * time.Millisecond); !a.TrustedUntil().Equal(want) {
			t.Errorf("Until %v after send, want 990ms", a.TrustedUntil().Sub(sent))
		}
		<-a.Context().Done()
		if got := time.Since(sent); got != 990*time.Millisecond {
			t.Errorf("Context done %v after send, want 990ms", got)
		}
		if !errors.Is(context.Cause(a.Context()), baton.ErrLockLost) {
			t.Errorf("cause %v", context.Cause(a.Context()))
		}
		_ = a.Release(ctx)

		// A grant that arrives after its own window is refused.
		p.delay = 2 * time.Second
		if _, err := l.TryAcquire(ctx, "y", &baton.AcquireOptions{AtMostFor: time.Second}); !errors.Is(err, baton.ErrLockLost) {
			t.Errorf("late grant: %v, want ErrLockLost", err)
		}
		p.delay = 0
		if b, err := l.TryAcquire(ctx, "y", nil); err != nil {
			t.Errorf("the late grant was not released: %v", err)
		} else {
			_ = b.Release(ctx)
		}
	})
}

func TestAutoRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l := newLocker(t, newMemory(t, nil), nil)
		a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second, AutoRenew: true})
		if err != nil {
			t.Fatal(err)
		}
		first := a.Lease().Until
		for range 50 { // a job 5x longer than the TTL
			time.Sleep(100 * time.Millisecond)
			if _, err := l.TryAcquire(ctx, "x", nil); !errors.Is(err, baton.ErrNotAcquired) {
				t.Fatalf("renewed lease taken: %v", err)
			}
		}
		if a.Context().Err() != nil {
			t.Fatalf("lost while renewing: %v", context.Cause(a.Context()))
		}
		if !a.Lease().Until.After(first.Add(3 * time.Second)) {
			t.Errorf("lease not extended: until %v, first %v", a.Lease().Until, first)
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the renewer has exited (synctest fails on a leak)
		if !errors.Is(context.Cause(a.Context()), baton.ErrReleased) {
			t.Errorf("cause %v", context.Cause(a.Context()))
		}
	})
}

// failingProvider makes Extend fail with an error of unknown outcome while
// down is set, as an unreachable backend would.
type failingProvider struct {
	lockprovider.Provider
	down atomic.Bool
}

var errUnreachable = errors.New("dial tcp: connection refused")

func (f *failingProvider) Extend(ctx context.Context, p lockprovider.ExtendParams) (batontype.Lease, error) {
	if f.down.Load() {
		return batontype.Lease{}, errUnreachable
	}
	return f.Provider.Extend(ctx, p)
}

func TestAutoRenewLoss(t *testing.T) {
	t.Run("backend unreachable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			p := &failingProvider{Provider: newMemory(t, nil)}
			l := newLocker(t, p, nil)
			a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second, AutoRenew: true})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			p.down.Store(true)
			downAt := time.Now()
			<-a.Context().Done()
			// The last renewal was sent at about 1.67s; its window
			// ends 1s - 12ms later, under a second after the outage.
			if lost := time.Since(downAt); lost > time.Second {
				t.Errorf("loss reported %v after the outage", lost)
			}
			if cause := context.Cause(a.Context()); !errors.Is(cause, baton.ErrLockLost) {
				t.Errorf("cause %v", cause)
			}
			p.down.Store(false)
			_ = a.Release(ctx)
		})
	})
	t.Run("lease gone", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			var skew atomic.Int64
			p := newMemory(t, &memory.Config{Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
			l := newLocker(t, p, nil)
			a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second, AutoRenew: true})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
			skew.Store(int64(time.Hour))
			<-a.Context().Done()
			cause := context.Cause(a.Context())
			if !errors.Is(cause, baton.ErrLockLost) || !errors.Is(cause, baton.ErrNotHeld) {
				t.Errorf("cause %v", cause)
			}
			_ = a.Release(ctx)
		})
	})
}

// lostReplyProvider applies the first n acquires and then reports an error,
// as when the reply is lost on the way back.
type lostReplyProvider struct {
	lockprovider.Provider
	n      atomic.Int64
	fences []int64
	mu     sync.Mutex
}

func (p *lostReplyProvider) Acquire(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error) {
	lease, err := p.Provider.Acquire(ctx, ap)
	if err == nil {
		p.mu.Lock()
		p.fences = append(p.fences, lease.Token)
		p.mu.Unlock()
	}
	if p.n.Add(-1) >= 0 {
		return batontype.Lease{}, errors.New("read tcp: i/o timeout")
	}
	return lease, err
}

func TestUnknownOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// TryAcquire releases what the lost reply granted.
	p := &lostReplyProvider{Provider: newMemory(t, nil)}
	p.n.Store(1)
	l := newLocker(t, p, nil)
	if _, err := l.TryAcquire(ctx, "x", nil); err == nil || errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("TryAcquire with a lost reply: %v", err)
	}
	b, err := l.TryAcquire(ctx, "x", nil)
	if err != nil {
		t.Fatalf("the lost grant still holds the lock: %v", err)
	}
	_ = b.Release(ctx)

	// Acquire retries with the same owner and gets the same grant.
	p2 := &lostReplyProvider{Provider: newMemory(t, nil)}
	p2.n.Store(2)
	l2 := newLocker(t, p2, nil)
	c, err := l2.Acquire(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	p2.mu.Lock()
	fences := p2.fences
	p2.mu.Unlock()
	if len(fences) != 3 || fences[0] != fences[2] || c.Token() != fences[0] {
		t.Errorf("grants %v, lock token %d: want one grant returned three times", fences, c.Token())
	}
	_ = c.Release(ctx)
}

// Auto-renew counts a third of the lease from each renewal's send, not its
// reply, so round trips of up to a third of the lease never cost the lock.
// A second Locker on the same provider, without the delay, checks that the
// lease never lapsed on the backend either.
func TestAutoRenewSlowRoundTrips(t *testing.T) {
	const ttl = 1500 * time.Millisecond
	for _, frac := range []int{27, 33, 40} {
		t.Run(fmt.Sprintf("%d%%", frac), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				mem := newMemory(t, nil)
				p := &slowProvider{Provider: mem, delay: ttl * time.Duration(frac) / 100}
				l := newLocker(t, p, nil)
				other := newLocker(t, mem, nil)
				a, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: true})
				if err != nil {
					t.Fatal(err)
				}
				for range 60 { // 6s, four lease lengths
					time.Sleep(100 * time.Millisecond)
					if err := a.Context().Err(); err != nil {
						t.Fatalf("lost with round trips of %d%% of the lease: %v", frac, context.Cause(a.Context()))
					}
					if b, err := other.TryAcquire(ctx, "x", nil); !errors.Is(err, baton.ErrNotAcquired) {
						_ = b.Release(ctx)
						t.Fatalf("the renewed lease lapsed on the backend: %v", err)
					}
				}
				if err := a.Release(ctx); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// lostReleaseReply passes the first n releases to the real provider, which
// performs them, and then reports a transport error instead of the answer,
// as when the reply is lost.
type lostReleaseReply struct {
	lockprovider.Provider
	n atomic.Int64
}

func (p *lostReleaseReply) Release(ctx context.Context, rp lockprovider.ReleaseParams) error {
	err := p.Provider.Release(ctx, rp)
	if err == nil && p.n.Add(-1) >= 0 {
		return errors.New("read tcp 127.0.0.1:6379: i/o timeout")
	}
	return err
}

// A second Release after one whose reply was lost tells "the first one
// worked" from "the lease had lapsed" by the trust window.
func TestReleaseAfterLostReply(t *testing.T) {
	lapsed := func(err error) bool { return errors.Is(err, baton.ErrLockLost) && errors.Is(err, baton.ErrNotHeld) }
	unknown := func(err error) bool { return err != nil && !errors.Is(err, baton.ErrNotHeld) }
	isNil := func(err error) bool { return err == nil }
	for _, c := range []struct {
		name          string
		lost          int64         // first releases whose reply is lost
		before, after time.Duration // sleep before the first release, between the two
		first, second func(error) bool
	}{
		{"retry inside the window", 1, 0, 500 * time.Millisecond, unknown, isNil},
		{"retry after the window", 1, 0, 2 * time.Second, unknown, lapsed},
		{"lease lapsed before the first release", 0, 2 * time.Second, 0, lapsed, isNil},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				p := &lostReleaseReply{Provider: newMemory(t, nil)}
				a := holdFor(t, newLocker(t, p, nil), "x", time.Second)
				p.n.Store(c.lost)
				time.Sleep(c.before)
				if err := a.Release(ctx); !c.first(err) {
					t.Errorf("first Release: %v", err)
				}
				time.Sleep(c.after)
				if err := a.Release(ctx); !c.second(err) {
					t.Errorf("second Release: %v", err)
				}
			})
		})
	}
}

// holdFor acquires name for d through l.
func holdFor(t *testing.T, l *baton.Locker, name string, d time.Duration) *baton.Lock {
	t.Helper()
	lock, err := l.TryAcquire(context.Background(), name, &baton.AcquireOptions{AtMostFor: d})
	if err != nil {
		t.Fatal(err)
	}
	return lock
}

// Check answers from the clock.
func TestCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLocker(t, newMemory(t, nil), nil)
		a := holdFor(t, l, "x", time.Second)
		if err := a.Check(); err != nil {
			t.Errorf("Check while held: %v", err)
		}
		time.Sleep(time.Second)
		if err := a.Check(); !errors.Is(err, baton.ErrLockLost) {
			t.Errorf("Check after the lease: %v, want ErrLockLost", err)
		}
		b := holdFor(t, l, "y", time.Second)
		_ = b.Release(context.Background())
		if err := b.Check(); !errors.Is(err, baton.ErrReleased) {
			t.Errorf("Check after Release: %v, want ErrReleased", err)
		}
	})
}

// A zero Lock answers with an error instead of a panic.
func TestZeroLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var z baton.Lock
	for what, err := range map[string]error{
		"Release": z.Release(ctx), "Extend": z.Extend(ctx, time.Second), "Check": z.Check(),
	} {
		if !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("zero Lock %s: %v, want an error matching ErrInvalid", what, err)
		}
	}
	if z.Context().Err() == nil || z.Name() != "" || z.Token() != 0 || !z.TrustedUntil().IsZero() {
		t.Errorf("zero Lock: Context().Err() %v, Name %q, Token %d", z.Context().Err(), z.Name(), z.Token())
	}
	var n *baton.Lock
	if err := n.Check(); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("nil Lock Check: %v", err)
	}
	if err := n.Extend(ctx, time.Second); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("nil Lock Extend: %v", err)
	}
}

// The same on Redis in real time: every call to a real Redis provider is
// delayed by 40% of a 1.5s lease; the auto-renewed lock is held for 6s.
func TestAutoRenewSlowRoundTripsRedis(t *testing.T) {
	t.Parallel()
	const ttl = 1500 * time.Millisecond
	ctx := context.Background()
	real := redisProvider(t, redisenv.Client(t))
	// The guarantee covers round trips up to 40 % of the lease; the added
	// delay is a third, so that the real call's own time on a loaded
	// machine keeps the whole round trip within it.
	l := newLocker(t, &slowProvider{Provider: real, delay: ttl / 3}, nil)
	other := newLocker(t, real, nil)
	a, err := l.TryAcquire(ctx, "renewed-slowly", &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := a.Check(); err != nil {
			t.Fatalf("lost with round trips of a third of the lease and more: %v", err)
		}
		if b, err := other.TryAcquire(ctx, "renewed-slowly", nil); !errors.Is(err, baton.ErrNotAcquired) {
			if err == nil {
				_ = b.Release(ctx)
			}
			t.Fatalf("the renewed lease lapsed on Redis: %v", err)
		}
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
