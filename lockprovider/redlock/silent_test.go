package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/redlock"
)

// Silent masters: a minority of masters behind proxies that swallow
// traffic. Every round completes once a majority answered, so a silent
// minority costs neither latency nor validity. The bounds below come from
// the documentation: a 300 ms lease is granted with more than half of it
// left (the first round's calls are bounded by half the lease's
// validity), a call returns by its context's deadline plus a few
// milliseconds (50 ms here, for a loaded machine), and a round that a
// majority answers does not wait for Config.Timeout (asserted as half of
// it).

// silentCases are the configurations tested: masters, of which silent.
var silentCases = []struct{ n, silent int }{{3, 1}, {5, 2}}

// silentMasters starts n masters behind proxies, with clients as the
// package documentation recommends, and a provider over them (default
// Config). The proxies of the last silent masters are blackholed after a
// warm-up round, so that the silent masters had connections open, as a
// master that goes silent in service has.
func silentMasters(t *testing.T, n, silent int) (*redlock.Provider, []*goredis.Client, []*testenv.Proxy) {
	t.Helper()
	proxies := make([]*testenv.Proxy, n)
	clients := make([]*goredis.Client, n)
	for i := range n {
		s := testenv.StartRedis(t)
		proxies[i] = testenv.NewProxy(t, s.Addr())
		clients[i] = goredis.NewClient(&goredis.Options{Addr: proxies[i].Addr(), DialerRetries: 1, MaxRetries: -1,
			DialTimeout: 250 * time.Millisecond, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = clients[i].Close() })
	}
	p := newProvider(t, clients, redlock.Config{})
	owner := lockprovider.NewOwner()
	if _, err := acquire(t, p, "warm-up", owner, time.Second); err != nil {
		t.Fatalf("warm-up acquire: %v", err)
	}
	if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: "warm-up", Owner: owner}); err != nil {
		t.Fatalf("warm-up release: %v", err)
	}
	for _, px := range proxies[n-silent:] {
		px.SetMode(testenv.Blackhole)
	}
	return p, clients, proxies
}

// percentiles formats the median and the largest of ds.
func percentiles(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("median %v, max %v", s[len(s)/2].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}

// Leases of 300 ms are granted with most of their validity, extended and
// released, each round without waiting for the silent masters.
func TestFaultSilentMasterShortLeases(t *testing.T) {
	const (
		lease = 300 * time.Millisecond
		slow  = redlock.DefaultTimeout / 2 // a round that waited for a silent master
		runs  = 10
	)
	for _, c := range silentCases {
		t.Run(fmt.Sprintf("%d_of_%d_silent", c.silent, c.n), func(t *testing.T) {
			p, _, _ := silentMasters(t, c.n, c.silent)
			var took, left, extTook, extLeft, relTook []time.Duration
			for i := range runs {
				owner := lockprovider.NewOwner()
				name := fmt.Sprint("short-", i)
				start := time.Now()
				l, err := acquire(t, p, name, owner, lease)
				took = append(took, time.Since(start))
				if err != nil {
					t.Fatalf("Acquire %d of a %v lease with %d of %d masters silent: %v (after %v)", i, lease, c.silent, c.n, err, time.Since(start))
				}
				left = append(left, time.Until(l.Until))
				if v := time.Until(l.Until); v <= lease/2 {
					t.Errorf("Acquire %d: granted with %v of a %v lease left, want more than half", i, v, lease)
				}
				start = time.Now()
				l, err = p.Extend(t.Context(), lockprovider.ExtendParams{Name: name, Owner: owner, AtMostFor: lease})
				extTook = append(extTook, time.Since(start))
				if err != nil {
					t.Fatalf("Extend %d: %v (after %v)", i, err, time.Since(start))
				}
				extLeft = append(extLeft, time.Until(l.Until))
				if v := time.Until(l.Until); v <= lease/2 {
					t.Errorf("Extend %d: %v of a %v lease left, want more than half", i, v, lease)
				}
				start = time.Now()
				if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: name, Owner: owner}); err != nil {
					t.Fatalf("Release %d: %v (after %v)", i, err, time.Since(start))
				}
				relTook = append(relTook, time.Since(start))
			}
			for what, ds := range map[string][]time.Duration{"Acquire": took, "Extend": extTook, "Release": relTook} {
				if d := slices.Max(ds); d >= slow {
					t.Errorf("%s took up to %v with a majority answering, want less than %v", what, d, slow)
				}
			}
			t.Logf("%d of %d silent, %v leases: Acquire took %s, validity left %s; Extend took %s, left %s; Release took %s",
				c.silent, c.n, lease, percentiles(took), percentiles(left), percentiles(extTook), percentiles(extLeft), percentiles(relTook))
		})
	}
}

// A long lease keeps nearly all of it: the grant does not wait for the
// silent masters (it used to wait Config.Timeout for them).
func TestFaultSilentMasterLongLease(t *testing.T) {
	const lease = 5 * time.Second
	for _, c := range silentCases {
		t.Run(fmt.Sprintf("%d_of_%d_silent", c.silent, c.n), func(t *testing.T) {
			p, _, _ := silentMasters(t, c.n, c.silent)
			owner := lockprovider.NewOwner()
			l, err := acquire(t, p, "long", owner, lease)
			if err != nil {
				t.Fatal(err)
			}
			left := time.Until(l.Until)
			if left < lease-redlock.DefaultTimeout/2 {
				t.Errorf("a %v lease granted with %v left, want at least %v", lease, left, lease-redlock.DefaultTimeout/2)
			}
			t.Logf("%d of %d silent: a %v lease granted with %v left", c.silent, c.n, lease, left.Round(100*time.Microsecond))
			if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: "long", Owner: owner}); err != nil {
				t.Errorf("Release: %v", err)
			}
		})
	}
}

// Against a name held by another owner, calls with a 300 ms deadline
// return within the deadline plus 50 ms: a failed acquire's clean-up does
// not wait for the silent masters, nor does the Locker's release after a
// cut-short attempt. The median of five calls is held to that; each one
// to four times the slack, since a loaded machine stalls a process for
// tens of milliseconds now and then (before the fix they took 1.3 s).
func TestFaultSilentMasterDeadline(t *testing.T) {
	const (
		deadline = 300 * time.Millisecond
		slack    = 50 * time.Millisecond
	)
	for _, c := range silentCases {
		t.Run(fmt.Sprintf("%d_of_%d_silent", c.silent, c.n), func(t *testing.T) {
			p, _, _ := silentMasters(t, c.n, c.silent)
			if _, err := acquire(t, p, "held", lockprovider.NewOwner(), time.Minute); err != nil {
				t.Fatal(err)
			}
			locker, err := baton.NewLocker(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				what string
				f    func(ctx context.Context) error
			}{
				{"Provider.Acquire", func(ctx context.Context) error {
					_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "held", Owner: lockprovider.NewOwner(), AtMostFor: 5 * time.Second})
					return err
				}},
				{"Locker.TryAcquire", func(ctx context.Context) error {
					_, err := locker.TryAcquire(ctx, "held", &baton.AcquireOptions{AtMostFor: 5 * time.Second})
					return err
				}},
				{"Locker.Acquire", func(ctx context.Context) error {
					_, err := locker.Acquire(ctx, "held", &baton.AcquireOptions{AtMostFor: 5 * time.Second})
					return err
				}},
			}
			for _, call := range calls {
				var took []time.Duration
				for range 5 {
					ctx, cancel := context.WithTimeout(t.Context(), deadline)
					start := time.Now()
					err := call.f(ctx)
					d := time.Since(start)
					cancel()
					took = append(took, d)
					if err == nil {
						t.Fatalf("%s of a held name succeeded", call.what)
					}
					if !errors.Is(err, batontype.ErrNotAcquired) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("%s: %v, want ErrNotAcquired or the deadline", call.what, err)
					}
					if d > deadline+4*slack {
						t.Errorf("%s with a %v deadline returned after %v (%v), want at most %v", call.what, deadline, d, err, deadline+4*slack)
					}
				}
				sorted := slices.Clone(took)
				slices.Sort(sorted)
				if m := sorted[len(sorted)/2]; m > deadline+slack {
					t.Errorf("%s with a %v deadline: median %v, want at most %v", call.what, deadline, m, deadline+slack)
				}
				t.Logf("%d of %d silent: %s with a %v deadline on a held name: %s", c.silent, c.n, call.what, deadline, percentiles(took))
			}
		})
	}
}

// An auto-renewed 1 s lock keeps its lease for 10 s while a minority of
// masters is silent.
func TestFaultSilentMasterAutoRenew(t *testing.T) {
	const (
		lease = time.Second
		hold  = 10 * time.Second
	)
	for _, c := range silentCases {
		t.Run(fmt.Sprintf("%d_of_%d_silent", c.silent, c.n), func(t *testing.T) {
			t.Parallel()
			p, _, proxies := silentMasters(t, c.n, 0)
			locker, err := baton.NewLocker(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			k, err := locker.TryAcquire(t.Context(), "renewed", &baton.AcquireOptions{AtMostFor: lease, AutoRenew: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, px := range proxies[c.n-c.silent:] {
				px.SetMode(testenv.Blackhole)
			}
			var minLeft time.Duration = lease
			for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if err := k.Check(); err != nil {
					t.Fatalf("lock lost after %v of %v with %d of %d masters silent: %v", hold-time.Until(end), hold, c.silent, c.n, err)
				}
				minLeft = min(minLeft, time.Until(k.TrustedUntil()))
			}
			t.Logf("%d of %d silent: a %v auto-renewed lock held for %v, least trust window left %v", c.silent, c.n, lease, hold, minLeft.Round(time.Millisecond))
			if err := k.Release(t.Context()); err != nil {
				t.Errorf("Release: %v", err)
			}
		})
	}
}
