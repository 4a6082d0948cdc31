package lockprovidertest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// The nil-context cases pass otherwise valid arguments, so that only the
// context is wrong: a provider must refuse it with ErrNilContext before it
// reaches its backend's driver, which would panic dereferencing it.

// nilCtx is a variable, not a literal nil, so that staticcheck's SA1012,
// meant for application code, is not tripped by every call below.
var nilCtx context.Context

// wantNilCtx calls f and fails the test unless it returned an error
// matching batontype.ErrNilContext (and so ErrInvalid) without
// panicking.
func wantNilCtx(t interface {
	Helper()
	Errorf(string, ...any)
}, what string, f func() error) {
	t.Helper()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return f()
	}()
	if !errors.Is(err, batontype.ErrInvalid) || !errors.Is(err, batontype.ErrNilContext) {
		t.Errorf("%s with a nil context: %v; want an error matching batontype.ErrNilContext and ErrInvalid", what, err)
	}
}

// errOf returns the error of a call that also returns a value.
func errOf[T any](_ T, err error) error { return err }

// stopped calls a stop func a provider returned with an error, if any: it
// must be safe to call.
func stopped(stop func(), err error) error {
	if stop != nil {
		stop()
	}
	return err
}

// Provider methods, and those of ReleaseNotifier and Inspector when the
// provider has them, refuse a nil context and change nothing.
func testNilContext(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	ap := lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: long}
	wantNilCtx(e.t, "Acquire", func() error { return errOf(e.p.Acquire(nilCtx, ap)) })
	e.wantFree(name, "after Acquire with a nil context")
	e.mustAcquire(name, owner, long, 0)
	ep := lockprovider.ExtendParams{Name: name, Owner: owner, AtMostFor: long}
	wantNilCtx(e.t, "Extend", func() error { return errOf(e.p.Extend(nilCtx, ep)) })
	wantNilCtx(e.t, "Release", func() error {
		return e.p.Release(nilCtx, lockprovider.ReleaseParams{Name: name, Owner: owner})
	})
	e.wantHeld(name, "after Release with a nil context")
	if rn, ok := e.p.(lockprovider.ReleaseNotifier); ok {
		wantNilCtx(e.t, "NotifyRelease", func() error {
			return stopped(rn.NotifyRelease(nilCtx, name, make(chan struct{}, 1)))
		})
	}
	if in, ok := e.p.(lockprovider.Inspector); ok {
		wantNilCtx(e.t, "Inspect", func() error { return errOf(in.Inspect(nilCtx, name)) })
		wantNilCtx(e.t, "List", func() error { return errOf(in.List(nilCtx)) })
	}
	e.mustRelease(name, owner)
}

// Admin methods, and ListRates when the provider is a RateLister, refuse a
// nil context; a forced release with one leaves the lease held.
func testAdminNilContext(e *env) {
	a := e.p.(lockprovider.Admin)
	name, owner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(name, owner, long, 0)
	wantNilCtx(e.t, "ForceRelease", func() error { return errOf(a.ForceRelease(nilCtx, lockprovider.ForceReleaseParams{Name: name})) })
	e.wantHeld(name, "after ForceRelease with a nil context")
	wantNilCtx(e.t, "ResetRate", func() error { return a.ResetRate(nilCtx, name) })
	wantNilCtx(e.t, "Ping", func() error { return a.Ping(nilCtx) })
	if rl, ok := e.p.(lockprovider.RateLister); ok {
		wantNilCtx(e.t, "ListRates", func() error { return errOf(rl.ListRates(nilCtx)) })
	}
	e.mustRelease(name, owner)
}

// Ledger methods refuse a nil context and record nothing.
func testLedgerNilContext(e *env) {
	lg := e.p.(lockprovider.Ledger)
	name, owner := e.name(), lockprovider.NewOwner()
	ap := lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: long}
	wantNilCtx(e.t, "AcquireRun", func() error { return errOf(lg.AcquireRun(nilCtx, ap, lockprovider.RunStart{})) })
	e.wantFree(name, "after AcquireRun with a nil context")
	l := e.mustAcquire(name, owner, long, 0)
	wantNilCtx(e.t, "ReleaseRun", func() error {
		return lg.ReleaseRun(nilCtx, lockprovider.ReleaseParams{Name: name, Owner: owner}, lockprovider.RunEnd{
			Run:     batontype.RunRecord{Job: name, Token: l.Token, Started: l.GrantedAt},
			Outcome: batontype.OutcomeSucceeded,
		})
	})
	e.wantHeld(name, "after ReleaseRun with a nil context")
	wantNilCtx(e.t, "Runs", func() error { return errOf(lg.Runs(nilCtx, batontype.RunQuery{Job: name})) })
	wantNilCtx(e.t, "LastRuns", func() error {
		_, _, err := lg.LastRuns(nilCtx, name)
		return err
	})
	if rs := e.runs(name, batontype.RunQuery{}); len(rs) != 0 {
		e.t.Errorf("calls with a nil context recorded runs: %+v", rs)
	}
	e.mustRelease(name, owner)
}

// Registry methods refuse a nil context and register nothing.
func testRegistryNilContext(e *env) {
	r := e.p.(lockprovider.Registry)
	wantNilCtx(e.t, "Register", func() error { return r.Register(nilCtx, instance("nil-ctx", "j"), time.Minute) })
	wantNilCtx(e.t, "Heartbeat", func() error { return r.Heartbeat(nilCtx, "nil-ctx", time.Minute) })
	wantNilCtx(e.t, "Deregister", func() error { return r.Deregister(nilCtx, "nil-ctx") })
	wantNilCtx(e.t, "Instances", func() error { return errOf(r.Instances(nilCtx)) })
	if is := e.instances(); len(is) != 0 {
		e.t.Errorf("calls with a nil context registered: %+v", is)
	}
}

// Control methods refuse a nil context and change no state.
func testControlNilContext(e *env) {
	c := e.control()
	job := e.name()
	wantNilCtx(e.t, "SetPaused", func() error { return c.SetPaused(nilCtx, job, true) })
	wantNilCtx(e.t, "RequestRun", func() error { return errOf(c.RequestRun(nilCtx, batontype.RunRequest{Job: job})) })
	wantNilCtx(e.t, "ClaimRun", func() error { return errOf(c.ClaimRun(nilCtx, "nil-ctx")) })
	wantNilCtx(e.t, "ControlState", func() error { return errOf(c.ControlState(nilCtx)) })
	wantNilCtx(e.t, "WatchControl", func() error {
		return stopped(c.WatchControl(nilCtx, make(chan struct{}, 1)))
	})
	if st := e.controlState(); st.IsPaused(job) || len(st.Requests) != 0 {
		e.t.Errorf("calls with a nil context changed the state: %+v", st)
	}
}

// AcquireBatch, and AcquireRunBatch when implemented, refuse a nil
// context and grant nothing.
func testBatchNilContext(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	aps := []lockprovider.AcquireParams{{Name: name, Owner: owner, AtMostFor: long}}
	for what, f := range e.batchFuncs() {
		wantNilCtx(e.t, what, func() error { return errOf(f(nilCtx, aps)) })
	}
	e.wantFree(name, "after batches with a nil context")
}

// ReleaseBatch refuses a nil context and releases nothing.
func testBatchReleaseNilContext(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(name, owner, long, 0)
	br := e.p.(lockprovider.BatchReleaser)
	wantNilCtx(e.t, "ReleaseBatch", func() error {
		return errOf(br.ReleaseBatch(nilCtx, []lockprovider.ReleaseParams{{Name: name, Owner: owner}}))
	})
	e.wantHeld(name, "after ReleaseBatch with a nil context")
	e.mustRelease(name, owner)
}

// AcquireRunBatch and ReleaseRunBatch refuse a nil context and grant or
// release nothing.
func testBatchLedgerNilContext(e *env) {
	bl := e.p.(lockprovider.BatchLedger)
	name, owner := e.name(), lockprovider.NewOwner()
	wantNilCtx(e.t, "AcquireRunBatch", func() error {
		return errOf(bl.AcquireRunBatch(nilCtx, []lockprovider.AcquireParams{{Name: name, Owner: owner, AtMostFor: long}}, lockprovider.RunStart{}))
	})
	e.wantFree(name, "after AcquireRunBatch with a nil context")
	l := e.mustAcquire(name, owner, long, 0)
	wantNilCtx(e.t, "ReleaseRunBatch", func() error {
		_, err := bl.ReleaseRunBatch(nilCtx, []lockprovider.ReleaseParams{{Name: name, Owner: owner}}, []lockprovider.RunEnd{{
			Run:     batontype.RunRecord{Job: name, Token: l.Token, Started: l.GrantedAt},
			Outcome: batontype.OutcomeSucceeded,
		}})
		return err
	})
	e.wantHeld(name, "after ReleaseRunBatch with a nil context")
	e.mustRelease(name, owner)
}

// RateLimit refuses a nil context and charges nothing.
func (e *rateEnv) testRateNilContext() {
	limits := []batontype.RateLimit{{Algorithm: batontype.FixedWindow, Rate: 3, Period: hour}}
	key := e.key()
	wantNilCtx(e.t, "RateLimit", func() error {
		return errOf(e.r.RateLimit(nilCtx, lockprovider.RateRequest{Key: key, N: 1, Limits: limits}))
	})
	if r := e.remaining(key, limits); r[0] != 3 {
		e.t.Errorf("remaining %d after RateLimit with a nil context; want 3 (nothing charged)", r[0])
	}
}
