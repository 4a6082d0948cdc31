package lockprovidertest

import (
	"context"
	"errors"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func contextCases() []testCase {
	return []testCase{
		{"CancelledAcquire", func(e *env) { e.testDoneAcquire(cancelled(e.ctx), context.Canceled) }},
		{"ExpiredDeadlineAcquire", func(e *env) { e.testDoneAcquire(pastDeadline(e), context.DeadlineExceeded) }},
		{"CancelledExtendRelease", func(e *env) { e.testDoneExtendRelease(cancelled(e.ctx), context.Canceled) }},
		{"ExpiredDeadlineExtendRelease", func(e *env) { e.testDoneExtendRelease(pastDeadline(e), context.DeadlineExceeded) }},
		{"NilContext", testNilContext},
	}
}

func cancelled(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	cancel()
	return ctx
}

func pastDeadline(e *env) context.Context {
	ctx, cancel := context.WithDeadline(e.ctx, time.Now().Add(-time.Second))
	e.t.Cleanup(cancel)
	return ctx
}

func (e *env) wantCtxErr(err, want error, what string) {
	e.t.Helper()
	switch {
	case err == nil:
		e.t.Errorf("%s with a done context: no error", what)
	case !errors.Is(err, want):
		e.t.Errorf("%s with a done context: error %v does not match %v", what, err, want)
	case errors.Is(err, batontype.ErrNotAcquired), errors.Is(err, batontype.ErrNotHeld):
		e.t.Errorf("%s with a done context: error %v claims a definite outcome", what, err)
	}
}

// An Acquire with a done context fails with the context's error and leaves
// no lease behind.
func (e *env) testDoneAcquire(ctx context.Context, want error) {
	name, owner := e.name(), lockprovider.NewOwner()
	_, err := e.p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: long})
	e.wantCtxErr(err, want, "Acquire")
	e.wantFree(name, "after Acquire with a done context")
}

// Extend and Release with a done context fail with the context's error and
// leave the lease as it was.
func (e *env) testDoneExtendRelease(ctx context.Context, want error) {
	name, owner := e.name(), lockprovider.NewOwner()
	l := e.mustAcquire(name, owner, long, 0)
	_, err := e.p.Extend(ctx, lockprovider.ExtendParams{Name: name, Owner: owner, AtMostFor: batontype.MinDuration})
	e.wantCtxErr(err, want, "Extend")
	e.wantCtxErr(e.p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}), want, "Release")
	time.Sleep(20 * time.Millisecond) // a 1ms extend, had it applied, has lapsed now
	e.wantHeld(name, "after Extend and Release with a done context")
	again, err := e.acquire(name, owner, long, 0)
	if err != nil || !sameLease(again, l) {
		e.t.Errorf("lease after Extend with a done context: %+v, %v; want unchanged %+v", again, err, l)
	}
	e.mustRelease(name, owner)
}
