package lockprovidertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// Tolerances. Lease times come from the backend's clock, which the suite
// assumes runs on (or in step with) the test machine.
const (
	// tol bounds the difference between two times the provider derives from
	// one server instant (Until-GrantedAt against AtMostFor): rounding to
	// milliseconds plus a little.
	tol = 5 * time.Millisecond
	// inspectTol bounds the difference between a Lease and the same lease
	// as read back through an Inspector.
	inspectTol = 50 * time.Millisecond
	// long is a lease length that outlives any subtest.
	long = time.Minute
	// waitLimit bounds every polling wait.
	waitLimit = 10 * time.Second
	// pollEvery is the polling interval of waits.
	pollEvery = 5 * time.Millisecond
	// shortLease is the shortest lease (and at-least bound) the timing
	// cases ask for; WithMinLease scales them from it.
	shortLease = 50 * time.Millisecond
)

// timing is what WithMinLease sets.
type timing struct {
	minLease time.Duration
}

// WithMinLease declares the shortest lease for which the provider's
// documented guarantee holds on the machine running the suite. The timing
// cases (expiry, at-least bounds, takeover after expiry, lapsed ticks...)
// use leases from 50 ms up; with WithMinLease(d) every duration of those
// cases (leases, at-least bounds, and the sleeps and waits tied to them) is
// multiplied by the smallest whole factor that makes a 50 ms lease at
// least d, so the cases check the same relations at an operating point the
// provider documents. A provider whose grant must fit its round trips
// inside the lease's own validity (Redlock: validity = lease - drift -
// the two rounds' time, otherwise Acquire returns an error matching
// batontype.ErrUnavailable) needs a lease well above those round trips
// on a busy machine. Without it (or with d <= 50 ms) the lengths are the
// suite's own.
func WithMinLease(d time.Duration) Option { return func(o *options) { o.timing.minLease = d } }

// leaseScale is the factor WithMinLease applies, at least 1.
func (s *suite) leaseScale() time.Duration {
	k := (s.opts.timing.minLease + shortLease - 1) / shortLease
	return max(k, 1)
}

// short returns d, a duration of a timing case, scaled by WithMinLease
// and by the case's retries (see runCase).
func (e *env) short(d time.Duration) time.Duration { return d * e.scale }

// tooSlow is the panic value with which a case stops when the machine was
// too slow for one of its short leases, see slow.
type tooSlow struct{ what string }

// slow stops the case, to be run again with longer leases, when err
// matches batontype.ErrUnavailable from a call for a lease of d shorter
// than long: the documented outcome when a provider cannot finish a grant
// within a short lease's validity (Redlock), which says the machine was
// busy, not that the provider is wrong. Only the case's own goroutine
// calls it (cases ask for short leases nowhere else).
func (e *env) slow(err error, d time.Duration, what string) {
	if d < long && errors.Is(err, batontype.ErrUnavailable) {
		panic(tooSlow{fmt.Sprintf("%s with a %v lease: %v", what, d, err)})
	}
}

// runCase runs fn at the scale WithMinLease sets and, each time a short
// lease proved too short for the machine (see slow), again with a fresh
// provider and leases twice as long, up to 8 times, so a slow machine
// costs time, not a false result.
func (s *suite) runCase(t *testing.T, fn func(e *env)) {
	t.Helper()
	first := s.leaseScale()
	for scale := first; ; scale *= 2 {
		e := s.env(t)
		e.scale = scale
		why, ok := e.try(fn)
		if ok {
			return
		}
		if scale >= 8*first {
			t.Fatalf("machine too slow even with %dx longer leases: %s", 8*first, why)
		}
		t.Logf("machine too slow at scale %d (%s); retrying with longer leases", scale, why)
	}
}

// try runs fn, reporting false and why when it stopped with tooSlow.
func (e *env) try(fn func(e *env)) (why string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ts, isSlow := r.(tooSlow)
			if !isSlow {
				panic(r)
			}
			why, ok = ts.what, false
		}
	}()
	fn(e)
	return "", true
}

// Run runs the conformance suite against the providers newProvider
// returns: the checks every provider must pass, then those of each
// optional capability (an interface of package lockprovider) the provider
// implements, found by type assertion, each as a subtest group named
// after the capability. Every capability the provider does not implement
// is named in the test log as skipped.
//
// newProvider is called once to discover the capabilities and then once
// per subtest, and must return providers of one type, each isolated from
// those of other calls (for example a fresh key prefix or schema, which
// also keeps the registries and control states apart), because subtests
// run in parallel. It should register its own cleanup with t.Cleanup and
// fail t (not skip) when its backend is unreachable.
func Run(t *testing.T, newProvider func(t *testing.T) lockprovider.Provider, opts ...Option) {
	t.Helper()
	s := &suite{newProvider: newProvider, id: randomID()}
	for _, o := range opts {
		o(&s.opts)
	}
	probe := s.provider(t)
	for _, g := range groups() {
		if g.needs != nil && !g.needs.has(probe) {
			t.Logf("skipped: %s (provider does not implement lockprovider.%s)", g.needs.what, g.needs.iface)
			continue
		}
		if len(g.cases) == 0 {
			continue // checked within other groups
		}
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					s.runCase(t, func(e *env) {
						if g.needs != nil && !g.needs.has(e.p) {
							t.Fatalf("lockprovidertest: newProvider returned a %T, which does not implement lockprovider.%s, after one that did", e.p, g.needs.iface)
						}
						c.fn(e)
					})
				})
			}
		})
	}
}

type testCase struct {
	name string
	fn   func(e *env)
}

// group is a subtest group: checks every provider must pass (needs nil)
// or those of one optional capability.
type group struct {
	name  string
	needs *capability
	cases []testCase // none: the capability is checked within other groups
}

// capability is an optional interface of package lockprovider.
type capability struct {
	what  string // how the log names it
	iface string // the interface's name
	has   func(p lockprovider.Provider) bool
}

func capabilityOf[I any](what, iface string) *capability {
	return &capability{what: what, iface: iface, has: func(p lockprovider.Provider) bool {
		_, ok := p.(I)
		return ok
	}}
}

func groups() []group {
	return []group{
		{"Acquire", nil, acquireCases()},
		{"Expiry", nil, expiryCases()},
		{"Extend", nil, extendCases()},
		{"Owner", nil, ownerCases()},
		{"Token", nil, fenceCases()},
		{"Tick", nil, tickCases()},
		{"Validation", nil, validationCases()},
		{"Context", nil, contextCases()},
		{"Exclusion", nil, exclusionCases()},
		{"History", nil, historyCases()},
		{"Notify", capabilityOf[lockprovider.ReleaseNotifier]("release notifications", "ReleaseNotifier"), notifyCases()},
		{"Inspect", capabilityOf[lockprovider.Inspector]("inspection and listing", "Inspector"), inspectCases()},
		{"Admin", capabilityOf[lockprovider.Admin]("admin", "Admin"), adminCases()},
		// Listing needs state to list: Admin's ResetRate and NilContext
		// cases check it.
		{"RateList", capabilityOf[lockprovider.RateLister]("rate listing", "RateLister"), nil},
		{"Ledger", capabilityOf[lockprovider.Ledger]("run ledger", "Ledger"), ledgerCases()},
		{"Registry", capabilityOf[lockprovider.Registry]("instance registry", "Registry"), registryCases()},
		{"Departures", capabilityOf[lockprovider.Departures]("departed instances", "Departures"), departureCases()},
		{"Control", capabilityOf[lockprovider.Control]("control", "Control"), controlCases()},
		{"Batch", capabilityOf[lockprovider.BatchAcquirer]("batch acquire", "BatchAcquirer"), batchCases()},
		{"BatchRelease", capabilityOf[lockprovider.BatchReleaser]("batch release", "BatchReleaser"), batchReleaseCases()},
		{"BatchLedger", capabilityOf[lockprovider.BatchLedger]("batch ledger", "BatchLedger"), batchLedgerCases()},
		{"Rate", capabilityOf[lockprovider.RateLimiter]("rate limiting", "RateLimiter"), rateGroupCases()},
	}
}

type suite struct {
	newProvider func(t *testing.T) lockprovider.Provider
	opts        options
	id          string
	seq         atomic.Int64
}

func (s *suite) provider(t *testing.T) lockprovider.Provider {
	t.Helper()
	p := s.newProvider(t)
	if p == nil {
		t.Fatal("lockprovidertest: newProvider returned nil")
	}
	return p
}

func (s *suite) env(t *testing.T) *env {
	t.Helper()
	return &env{t: t, p: s.provider(t), ctx: t.Context(), s: s, scale: s.leaseScale()}
}

// env is the state of one subtest.
type env struct {
	t   *testing.T
	p   lockprovider.Provider
	ctx context.Context
	s   *suite
	// scale multiplies the durations of timing cases, see short.
	scale time.Duration
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// name returns a lock name no other subtest uses.
func (e *env) name() string {
	return fmt.Sprintf("lpt-%s-%d", e.s.id, e.s.seq.Add(1))
}

func (e *env) acquire(name, owner string, atMostFor, atLeastFor time.Duration) (batontype.Lease, error) {
	l, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{
		Name: name, Owner: owner, LockedBy: "lockprovidertest",
		AtMostFor: atMostFor, AtLeastFor: atLeastFor,
	})
	e.slow(err, atMostFor, "Acquire")
	return l, err
}

func (e *env) mustAcquire(name, owner string, atMostFor, atLeastFor time.Duration) batontype.Lease {
	e.t.Helper()
	l, err := e.acquire(name, owner, atMostFor, atLeastFor)
	if err != nil {
		e.t.Fatalf("Acquire(%q, AtMostFor %v, AtLeastFor %v): %v", name, atMostFor, atLeastFor, err)
	}
	e.checkLease(l, name, owner)
	return l
}

func (e *env) checkLease(l batontype.Lease, name, owner string) {
	e.t.Helper()
	if l.Name != name || l.Owner != owner {
		e.t.Errorf("lease is for (%q, %q), want (%q, %q)", l.Name, l.Owner, name, owner)
	}
	if l.Token <= 0 {
		e.t.Errorf("lease Token = %d, want > 0", l.Token)
	}
}

func (e *env) extend(name, owner string, atMostFor, atLeastFor time.Duration) (batontype.Lease, error) {
	l, err := e.p.Extend(e.ctx, lockprovider.ExtendParams{
		Name: name, Owner: owner, AtMostFor: atMostFor, AtLeastFor: atLeastFor,
	})
	e.slow(err, atMostFor, "Extend")
	return l, err
}

func (e *env) mustExtend(name, owner string, atMostFor, atLeastFor time.Duration) batontype.Lease {
	e.t.Helper()
	l, err := e.extend(name, owner, atMostFor, atLeastFor)
	if err != nil {
		e.t.Fatalf("Extend(%q, AtMostFor %v, AtLeastFor %v): %v", name, atMostFor, atLeastFor, err)
	}
	e.checkLease(l, name, owner)
	return l
}

func (e *env) release(name, owner string) error {
	return e.p.Release(e.ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
}

func (e *env) mustRelease(name, owner string) {
	e.t.Helper()
	if err := e.release(name, owner); err != nil {
		e.t.Fatalf("Release(%q): %v", name, err)
	}
}

// wantErr fails the test unless err matches target.
func (e *env) wantErr(err, target error, what string) {
	e.t.Helper()
	if !errors.Is(err, target) {
		e.t.Errorf("%s: got error %v, want %v", what, err, target)
	}
}

// free tries to take name with a fresh owner and reports whether it could. A
// successful probe releases the name again.
func (e *env) free(name string) bool {
	e.t.Helper()
	owner := lockprovider.NewOwner()
	_, err := e.acquire(name, owner, long, 0)
	switch {
	case err == nil:
		e.mustRelease(name, owner)
		return true
	case errors.Is(err, batontype.ErrNotAcquired):
		return false
	default:
		e.t.Fatalf("probe Acquire(%q): unexpected error %v", name, err)
		return false
	}
}

// wantHeld fails the test if another owner can take name.
func (e *env) wantHeld(name, why string) {
	e.t.Helper()
	if e.free(name) {
		e.t.Errorf("%s: another owner could acquire %q, want it held", why, name)
	}
}

// wantFree fails the test unless another owner can take name at once.
func (e *env) wantFree(name, why string) {
	e.t.Helper()
	if !e.free(name) {
		e.t.Errorf("%s: another owner could not acquire %q, want it free", why, name)
	}
}

// heldUntil checks that name is held by someone else, but only while less
// than d has passed since start (local clock); after that the check says
// nothing. It returns false when it could not decide.
func (e *env) heldUntil(name string, start time.Time, d time.Duration, why string) bool {
	e.t.Helper()
	isFree := e.free(name)
	if time.Since(start) >= d-tol {
		return false // too late for the answer to mean anything
	}
	if isFree {
		e.t.Errorf("%s: %q was free %v after start, want held for %v", why, name, time.Since(start), d)
	}
	return true
}

// waitFree polls until another owner can take name and returns the local
// time at which that succeeded.
func (e *env) waitFree(name string, why string) time.Time {
	e.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if e.free(name) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: %q still held after %v", why, name, waitLimit)
		}
		time.Sleep(pollEvery) // poll interval of a deadline-bounded wait
	}
}

// timed runs a timing-dependent scenario whose shortest lease or bound is
// base at scale 1. The scenario returns false when the machine was too slow
// for its checks to be meaningful; it is then repeated with longer
// durations, so a slow machine costs time, not a false result. The first
// scale is the smallest that makes base at least WithMinLease's length, so
// a provider's shortest documented operating point is where it starts.
func (e *env) timed(base time.Duration, f func(scale time.Duration) bool) {
	e.t.Helper()
	first := max((e.s.opts.timing.minLease+base-1)/base, 1)
	for scale := first; scale <= 8*first; scale *= 2 {
		if f(scale) {
			return
		}
		e.t.Logf("timing scenario inconclusive at scale %d (busy machine); retrying with longer leases", scale)
	}
	e.t.Fatalf("timing scenario inconclusive even with %dx longer leases", 8*first)
}

// sleepPast sleeps until a lease of length d granted before t0 has lapsed,
// with a margin for the backend's rounding.
func sleepPast(t0 time.Time, d time.Duration) {
	time.Sleep(time.Until(t0.Add(d + 20*time.Millisecond))) // the documented lapse at AtMostFor, plus rounding
}

func near(got, want, tolerance time.Duration) bool {
	d := got - want
	return d <= tolerance && d >= -tolerance
}

func nearTime(got, want time.Time, tolerance time.Duration) bool {
	return near(got.Sub(want), 0, tolerance)
}
