package baton

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// Lock is a held lease. Its methods are safe for concurrent use. A Lock is
// not reentrant and not tied to a goroutine: whoever has the *Lock may
// extend or release it.
type Lock struct {
	l         *Locker
	name      string
	owner     string
	lockedBy  string
	atLeastAt time.Time // local time until which a release keeps the lease (estimate)

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	lease    lockprovider.Lease
	ttl      time.Duration // lease length that auto-renew maintains
	deadline time.Time     // end of the local trust window (monotonic)
	timer    *time.Timer   // fires at deadline

	extMu sync.Mutex // serialises Extend and renewals

	relMu    sync.Mutex
	released bool

	renewDone chan struct{} // nil without auto-renew
}

func newLock(ctx context.Context, l *Locker, r request, lease lockprovider.Lease, anchor time.Time) *Lock {
	k := &Lock{
		l:         l,
		name:      r.params.Name,
		owner:     r.params.Owner,
		lockedBy:  r.params.LockedBy,
		atLeastAt: anchor.Add(r.params.AtLeastFor),
		lease:     lease,
		ttl:       r.params.AtMostFor,
	}
	// Values of the acquiring context (trace ids) carry over; its
	// cancellation does not: the lock outlives the Acquire call.
	k.ctx, k.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	length := r.params.AtMostFor
	if granted := lease.Until.Sub(lease.GrantedAt); granted > 0 && granted < length {
		length = granted
	}
	k.deadline = anchor.Add(length - r.margin)
	k.timer = time.AfterFunc(time.Until(k.deadline), k.windowEnded)
	if r.autoRenew {
		k.renewDone = make(chan struct{})
		go k.renew()
	}
	return k
}

// Name returns the lock's name.
func (k *Lock) Name() string { return k.name }

// Token returns the fencing token of the grant: it is larger than the token
// of every earlier grant of the same name. Pass it to the protected resource
// (see package fence) so that it can reject writes from a holder whose lease
// has since passed to someone else. Tokens of different names are not
// comparable.
func (k *Lock) Token() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lease.Token
}

// Lease returns the provider's grant as last extended. Its times are the
// backend's clock, not this process's.
func (k *Lock) Lease() lockprovider.Lease {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lease
}

// Until returns the local time at which the trust window ends unless the
// lease is extended first. Compare it with time.Now, not with server times.
func (k *Lock) TrustedUntil() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deadline
}

// Context returns a context that is cancelled when the lock ends: with cause
// ErrLockLost when the lease was lost or the trust window ended, or with
// cause ErrReleased after Release. Read the cause with context.Cause. It
// carries the values of the context given to Acquire.
func (k *Lock) Context() context.Context { return k.ctx }

// windowEnded runs when the trust-window timer fires.
func (k *Lock) windowEnded() {
	// Decided under mu, so that an extension either moved the deadline
	// before this check or sees the loss when it takes mu.
	k.mu.Lock()
	if time.Now().Before(k.deadline) || k.ctx.Err() != nil { // moved meanwhile, or ended
		k.mu.Unlock()
		return
	}
	cause := fmt.Errorf("%w: trust window ended", ErrLockLost)
	k.cancel(cause)
	token := k.lease.Token
	k.mu.Unlock()
	k.l.log.Warn("baton: lock lost", "lock_name", k.name, "token", token, "err", cause)
}

func (k *Lock) lose(cause error) {
	if k.ctx.Err() != nil {
		return
	}
	k.cancel(cause)
	k.l.log.Warn("baton: lock lost", "lock_name", k.name, "token", k.Token(), "err", cause)
}

// Extend sets the lease to end d from now (backend time), longer or shorter
// than before, and moves the trust window to start at this call. With
// auto-renew, later renewals maintain d. A lease still inside its AtLeastFor
// bound keeps that bound (shortened to d if d is shorter).
//
// It returns an error matching ErrLockLost and ErrNotHeld when the lease is
// no longer held (and then cancels Context), ErrLockLost after the lock was
// lost, ErrReleased after Release, and a *ValidationError for a bad d. Any
// other error is of unknown outcome: the trust window stays as it was.
func (k *Lock) Extend(ctx context.Context, d time.Duration) error {
	if err := lockprovider.ValidateDurations(d, 0); err != nil {
		return err
	}
	if m := k.l.marginFor(d); m >= d {
		return invalid("d", d.String(), "must exceed the trust window's safety margin "+m.String(), ErrInvalidDuration)
	}
	return k.extend(ctx, d)
}

func (k *Lock) extend(ctx context.Context, d time.Duration) error {
	k.extMu.Lock()
	defer k.extMu.Unlock()
	if k.ctx.Err() != nil {
		return k.endedErr()
	}
	send := time.Now()
	atLeast := min(max(k.atLeastAt.Sub(send), 0), d)
	lease, err := k.l.p.Extend(ctx, lockprovider.ExtendParams{
		Name: k.name, Owner: k.owner, AtMostFor: d, AtLeastFor: atLeast,
	})
	k.l.observe(time.Since(send))
	switch {
	case err == nil:
	case errors.Is(err, lockprovider.ErrNotHeld):
		k.lose(fmt.Errorf("%w: %w", ErrLockLost, err))
		return k.endedErr()
	case definite(err):
		return err
	default:
		return fmt.Errorf("baton: extend %q: %w", k.name, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ctx.Err() != nil {
		// Lost or released while the call was in flight; the loss is
		// final even though the backend granted the extension.
		return k.endedErr()
	}
	k.lease = lease
	k.ttl = d
	k.deadline = send.Add(d - k.l.marginFor(d))
	k.timer.Reset(time.Until(k.deadline))
	return nil
}

// endedErr returns the reason the lock ended.
func (k *Lock) endedErr() error {
	return context.Cause(k.ctx)
}

// renew is the auto-renew goroutine: it ends at Release or loss.
func (k *Lock) renew() {
	defer close(k.renewDone)
	t := time.NewTimer(k.renewState().ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-k.ctx.Done():
			return
		case <-t.C:
		}
		// A failure of unknown outcome is retried until the trust
		// window ends; the window's timer then cancels k.ctx.
		st := k.renewState()
		ctx, cancel := context.WithDeadline(k.ctx, st.deadline)
		err := k.extend(ctx, st.ttl)
		cancel()
		if k.ctx.Err() != nil {
			return
		}
		if err != nil {
			k.l.log.Warn("baton: renewal failed; retrying", "lock_name", k.name, "err", err)
			t.Reset(max(st.ttl/20, time.Millisecond))
			continue
		}
		t.Reset(k.renewState().ttl / 3)
	}
}

type renewState struct {
	ttl      time.Duration
	deadline time.Time
}

func (k *Lock) renewState() renewState {
	k.mu.Lock()
	defer k.mu.Unlock()
	return renewState{k.ttl, k.deadline}
}

// Release ends the lock: it cancels Context with cause ErrReleased (unless
// the lock was lost before), stops auto-renew and releases the lease, which
// then stays held until its AtLeastFor bound if that lies ahead. It ignores
// ctx's cancellation, so it works during shutdown, and is bounded by
// Config.ReleaseTimeout.
//
// Release is idempotent: once the provider has answered, later calls return
// nil. It returns an error matching ErrNotHeld when the lease had already
// expired or passed to another owner, and an error of unknown outcome when
// the provider could not be reached (the lease then lapses at its expiry;
// calling Release again retries).
func (k *Lock) Release(ctx context.Context) error {
	if k == nil {
		return nil
	}
	k.relMu.Lock()
	defer k.relMu.Unlock()
	if k.released {
		return nil
	}
	k.cancel(ErrReleased)
	k.mu.Lock()
	k.timer.Stop()
	k.mu.Unlock()
	if k.renewDone != nil {
		<-k.renewDone
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.l.releaseTimeout)
	defer cancel()
	start := time.Now()
	err := k.l.p.Release(ctx, lockprovider.ReleaseParams{Name: k.name, Owner: k.owner})
	k.l.observe(time.Since(start))
	switch {
	case err == nil:
		k.released = true
		return nil
	case definite(err):
		k.released = true
		return fmt.Errorf("baton: release %q: %w", k.name, err)
	default:
		k.l.log.Warn("baton: release failed; the lease lapses at expiry", "lock_name", k.name, "err", err)
		return fmt.Errorf("baton: release %q: %w", k.name, err)
	}
}
