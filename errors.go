package baton

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-go/baton/batontype"
)

// Definite outcomes, re-exported from batontype so that applications need
// to import only baton. They are the same values: errors.Is matches either
// spelling.
var (
	// ErrNotAcquired means another owner holds the lock.
	ErrNotAcquired = batontype.ErrNotAcquired
	// ErrNotHeld means the lease is no longer this owner's: it expired,
	// was released, or passed to another owner.
	ErrNotHeld = batontype.ErrNotHeld
	// ErrUnavailable means the backend could not be reached or did not answer
	// in time; it never matches ErrNotAcquired.
	ErrUnavailable = batontype.ErrUnavailable
)

// Errors of the lock API.
var (
	// ErrLockLost is the cause of a Lock's Context when the lease was lost:
	// a renewal or Extend found it gone (then the cause also matches
	// ErrNotHeld), or the local trust window ended before a renewal
	// succeeded. Extend on a lost lock returns it too. It is the same value
	// as scheduler.ErrLockLost.
	ErrLockLost = batontype.ErrLockLost
	// ErrReleased is the cause of a Lock's Context after Release, and what
	// Extend returns on a released lock.
	ErrReleased = errors.New("baton: lock released")
	// ErrDeadlineTooSoon is returned by Acquire when, after the backend
	// answered that another owner holds the lock, ctx's deadline leaves
	// less time than one round trip to the provider, so waiting longer
	// could not succeed. It matches context.DeadlineExceeded. The error
	// Acquire returns then also matches ErrNotAcquired, because the
	// backend said so; ErrDeadlineTooSoon alone does not.
	ErrDeadlineTooSoon = fmt.Errorf("%w: too soon for another attempt", context.DeadlineExceeded)
)

// errLateGrant: a grant arrived after its trust window had ended.
var errLateGrant = fmt.Errorf("%w: granted after its trust window ended", ErrLockLost)

// Bad input. Every validation error is a *ValidationError naming the field
// and matches ErrInvalid (and the more specific sentinel) with errors.Is.
var (
	ErrInvalid         = batontype.ErrInvalid
	ErrInvalidName     = batontype.ErrInvalidName
	ErrInvalidDuration = batontype.ErrInvalidDuration
	// ErrNilProvider is returned by NewLocker for a nil provider (also a
	// typed nil, such as a nil *memory.Provider), and by the methods of a
	// nil or zero Locker. It is a *ValidationError, the same value as
	// ratelimit.ErrNilProvider and batontype.ErrNilProvider.
	ErrNilProvider = batontype.ErrNilProvider
	// ErrNilContext is returned by TryAcquire and Acquire for a nil
	// context. It is a *ValidationError, the same value as
	// batontype.ErrNilContext, which providers return.
	ErrNilContext = batontype.ErrNilContext
)

// ValidationError reports which input was rejected and why.
type ValidationError = batontype.ValidationError

// definite reports whether err is an answer rather than an unknown outcome.
func definite(err error) bool { return batontype.Definite(err) }
