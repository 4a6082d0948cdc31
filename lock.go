package baton

import (
	"context"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
)

// Lock is a held lease. Its methods are safe for concurrent use. A Lock is
// not tied to a goroutine: whoever has the *Lock may extend or release it.
// Its Context makes acquires of the same name through the same Locker
// nested holds (see Locker.Acquire and WithLock). Obtain one from a Locker;
// the methods of a zero Lock return an error matching ErrInvalid.
type Lock struct {
	ls     lease.Lease
	locker *Locker
	hold   holdCtx // the parent of the lease's context, carrying this lock; see reentrant.go
	nest   *nested // set on a nested hold, which shares another Lock's lease
}

// rttObserver feeds the Locker's round-trip estimate from its locks.
type rttObserver Locker

func (o *rttObserver) Observe(d time.Duration) { (*Locker)(o).observe(d) }

func newLock(ctx context.Context, l *Locker, r request, grant batontype.Lease, anchor time.Time) *Lock {
	k := &Lock{locker: l}
	// Values of the acquiring context (trace ids) carry over; its
	// cancellation does not: the lock outlives the Acquire call. The
	// context also carries the lock itself, for nested holds.
	k.ls.Start(k.carry(lease.Detach(ctx), r.params.Name), l.leasePolicy(), lease.Params{
		Name:       r.params.Name,
		Owner:      r.params.Owner,
		AtMostFor:  r.params.AtMostFor,
		AtLeastFor: r.params.AtLeastFor,
		AutoRenew:  r.autoRenew,
	}, grant, anchor)
	return k
}

// leasePolicy is what the Locker's locks share, made on first use.
func (l *Locker) leasePolicy() *lease.Policy {
	if p := l.leases.Load(); p != nil {
		return p
	}
	p := lease.NewPolicy(lease.Policy{
		Provider:       l.p,
		Margin:         l.margin,
		CallTimeout:    l.callTimeout,
		ReleaseTimeout: l.releaseTimeout,
		Released:       ErrReleased,
		Observer:       (*rttObserver)(l),
		Events:         l.obs,
		Logger:         l.log,
		Label:          "baton",
	})
	if !l.leases.CompareAndSwap(nil, p) {
		p = l.leases.Load()
	}
	return p
}

// Name returns the lock's name.
func (k *Lock) Name() string {
	if k == nil {
		return ""
	}
	if k.nest != nil {
		return k.nest.root.Name()
	}
	return k.ls.Name()
}

// Token returns the fencing token of the grant: it is larger than the token
// of every earlier grant of the same name. Pass it to the protected resource
// (see package fence) so that it can reject writes from a holder whose lease
// has since passed to someone else. Tokens of different names are not
// comparable.
func (k *Lock) Token() int64 {
	if k == nil {
		return 0
	}
	if k.nest != nil {
		return k.nest.root.Token()
	}
	return k.ls.Token()
}

// Lease returns the provider's grant as last extended. Its times are the
// backend's clock, not this process's.
func (k *Lock) Lease() batontype.Lease {
	if k == nil {
		return batontype.Lease{}
	}
	if k.nest != nil {
		return k.nest.root.Lease()
	}
	return k.ls.Grant()
}

// TrustedUntil returns the local time at which the trust window ends unless
// the lease is extended first. Compare it with time.Now, not with server
// times.
func (k *Lock) TrustedUntil() time.Time {
	if k == nil {
		return time.Time{}
	}
	if k.nest != nil {
		return k.nest.root.TrustedUntil()
	}
	return k.ls.TrustedUntil()
}

// Context returns a context that is cancelled when the lock ends: with cause
// ErrLockLost when the lease was lost or the trust window ended, or with
// cause ErrReleased after Release. Read the cause with context.Cause. It
// carries the values of the context given to Acquire, and the lock itself:
// the fenced writes of package fence given this context (or one derived
// from it) call Check first.
//
// The context's Err, Done and Value call Check first: once the trust
// window has passed on the monotonic clock, the context is cancelled at
// that call, even if the window's timer (which a paused or overloaded
// process runs late) has not fired. Contexts derived from it see the end
// when it is cancelled, by Check or by the timer; call Check, or Err on
// this context, for an answer that does not depend on the timer.
func (k *Lock) Context() context.Context {
	if k == nil {
		return (&lease.Lease{}).Context()
	}
	if k.nest != nil {
		return lease.Checked(k.nest.ctx, k.nest.check)
	}
	return k.ls.Context()
}

// Check reports whether the lock can still be trusted, comparing the trust
// window with the monotonic clock now rather than waiting for the window's
// timer (which runs late after a pause: a process stopped past its lease
// may otherwise act before its Context is cancelled). It returns nil while
// the window is open. Once it has passed, Check cancels Context and returns
// an error matching ErrLockLost; after a loss or Release it returns the
// cause of Context. Call it right before acting on the protected resource;
// a pause between Check and the action is what fencing tokens cover.
func (k *Lock) Check() error {
	if k == nil {
		return lease.ErrZero
	}
	if k.nest != nil {
		return k.nest.check()
	}
	return k.ls.Check()
}

// Extend sets the lease to end d from now (backend time), longer or shorter
// than before, and moves the trust window to start at this call. With
// auto-renew, later renewals maintain d. A lease still inside its AtLeastFor
// bound keeps that bound (shortened to d if d is shorter): the bound is
// counted from the reply that set it, so Extend never asks the backend for
// an earlier one, whatever the latency of the acquire.
//
// It returns an error matching ErrLockLost and ErrNotHeld when the lease is
// no longer held (and then cancels Context), ErrLockLost after the lock was
// lost, ErrReleased after Release, and a *ValidationError for a bad d. Any
// other error is of unknown outcome: the trust window stays as it was. The
// provider call is bounded by Config.CallTimeout as well as by ctx.
func (k *Lock) Extend(ctx context.Context, d time.Duration) error {
	if k == nil {
		return lease.ErrZero
	}
	if ctx == nil {
		return ErrNilContext
	}
	if k.nest != nil {
		return k.nest.extend(ctx, d)
	}
	return k.ls.Extend(ctx, d)
}

// Release ends the lock: it cancels Context with cause ErrReleased (unless
// the lock was lost before), stops auto-renew and releases the lease, which
// then stays held until its AtLeastFor bound if that lies ahead. It ignores
// ctx's cancellation, so it works during shutdown, and is bounded by
// Config.ReleaseTimeout.
//
// Release is idempotent: once the provider has answered, later calls return
// nil. An error of unknown outcome (the provider could not be reached, or
// its reply was lost) means the lease lapses at its expiry unless a later
// call succeeds; calling Release again retries. When the provider answers
// that the lease is not held, Release tells the two possible reasons apart
// by the trust window: if an earlier Release of unknown outcome was sent and
// this retry is still inside the window of the last grant or extension, the
// earlier one landed and Release returns nil; otherwise the lease had
// lapsed or passed to another owner before it was released, and the error
// matches both ErrLockLost and ErrNotHeld. A nil *Lock's Release returns
// nil; a nil ctx counts as context.Background.
//
// The Release of a nested hold (see Locker.Acquire) ends that hold only,
// cancelling its Context with ErrReleased; it never calls the provider.
func (k *Lock) Release(ctx context.Context) error {
	if k == nil {
		return nil
	}
	if k.nest != nil {
		return k.nest.release()
	}
	return k.ls.Release(ctx)
}
