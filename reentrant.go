package baton

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Reentrancy is scoped to a context, not to a goroutine: Go has no thread
// identity to key a hold on (Java's reentrant locks key on the thread), and
// a call tree in Go is the tree of contexts passed down it. A Lock's Context
// carries the Lock; an acquire of the same name through the same Locker with
// that context, or one derived from it, is a nested hold on the same lease
// instead of a contender that would wait for its own caller.

// holdKey is the context key of a held lock: one per Locker and name, so a
// context carrying holds of several names (or of one name through several
// Lockers) finds each one directly.
type holdKey struct {
	l    *Locker
	name string
}

// anyHold is the context key that finds the nearest hold of any name. Its
// zero size makes it free to pass as a key, so an acquire through a context
// that carries no hold (the common case) costs no allocation to check.
type anyHold struct{}

// holdCtx carries a hold. A Lock embeds the one its Context derives from,
// so carrying itself costs the lock no allocation.
type holdCtx struct {
	context.Context
	k    *Lock
	name string
}

func (c *holdCtx) Value(key any) any {
	switch key := key.(type) {
	case anyHold:
		return c.k
	case holdKey:
		if key.l == c.k.locker && key.name == c.name {
			return c.k
		}
	}
	return c.Context.Value(key)
}

// carry makes k's hold of name a child of parent and returns it, to be the
// parent of k's lease context.
func (k *Lock) carry(parent context.Context, name string) context.Context {
	k.hold = holdCtx{Context: parent, k: k, name: name}
	return &k.hold
}

// WithLock returns a copy of ctx that carries lock, so that acquiring the
// lock's name through the same Locker with it (or with a context derived
// from it) is a nested hold of lock, as with lock.Context(). Use it to pass
// the hold down a call tree whose context is not the lock's, such as a
// request context; its cancellation stays ctx's. A nil or zero lock returns
// ctx unchanged, and a nil ctx counts as context.Background.
func WithLock(ctx context.Context, lock *Lock) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	if lock == nil {
		return ctx
	}
	if lock.nest != nil {
		lock = lock.nest.root
	}
	if lock.locker == nil {
		return ctx
	}
	return &holdCtx{Context: ctx, k: lock, name: lock.Name()}
}

// reenter returns a nested hold when ctx carries a lock on name acquired
// through l, an error when that lock has ended, and nil, nil when ctx
// carries none.
//
// The nested hold shares the outer lease as it is: the options of the
// nested call (AtMostFor, AtLeastFor, AutoRenew, LockedBy) were validated
// but do not apply, because one lease cannot have two lengths; Extend the
// nested hold to change the shared lease.
func (l *Locker) reenter(ctx context.Context, name string) (*Lock, error) {
	if ctx.Value(anyHold{}) == nil {
		return nil, nil
	}
	root, ok := ctx.Value(holdKey{l, name}).(*Lock)
	if !ok {
		return nil, nil
	}
	// Check rather than Context().Err(): a holder resumed after a pause
	// must not start a nested hold before its window's timer has run.
	if err := root.Check(); err != nil {
		return nil, acquireErr(name, fmt.Errorf("the lock this context carries has ended: %w", err))
	}
	n := &nested{root: root}
	n.ctx, n.cancel = context.WithCancelCause(root.Context())
	return &Lock{locker: l, nest: n}, nil
}

// nested is the state of a nested hold: the Lock whose lease it shares and
// its own context, which ends with that Lock's or at its own Release.
type nested struct {
	root   *Lock
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	released bool
}

func (n *nested) ended() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.released
}

// check is the root's Check, or ErrReleased once this hold was released.
func (n *nested) check() error {
	if n.ended() {
		return ErrReleased
	}
	return n.root.Check()
}

// extend extends the shared lease, unless this hold was released.
func (n *nested) extend(ctx context.Context, d time.Duration) error {
	if ctx == nil {
		return ErrNilContext
	}
	if n.ended() {
		return ErrReleased
	}
	return n.root.Extend(ctx, d)
}

// release ends this hold only: the lease stays with the root, whose own
// Release ends it. It never calls the provider and always succeeds.
func (n *nested) release() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.released {
		n.released = true
		n.cancel(ErrReleased)
	}
	return nil
}
