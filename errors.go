package baton

import (
	"errors"
	"fmt"

	"github.com/baton-go/baton/lockprovider"
)

// Definite outcomes, re-exported from lockprovider so that applications need
// to import only baton. They are the same values: errors.Is matches either
// spelling.
var (
	// ErrNotAcquired means another owner holds the lock.
	ErrNotAcquired = lockprovider.ErrNotAcquired
	// ErrNotHeld means the lease is no longer this owner's: it expired,
	// was released, or passed to another owner.
	ErrNotHeld = lockprovider.ErrNotHeld
	// ErrUnavailable means the backend could not be reached or did not answer
	// in time; it never matches ErrNotAcquired.
	ErrUnavailable = lockprovider.ErrUnavailable
)

// Errors of the lock API.
var (
	// ErrLockLost is the cause of a Lock's Context when the lease was lost:
	// a renewal or Extend found it gone (then the cause also matches
	// ErrNotHeld), or the local trust window ended before a renewal
	// succeeded. Extend on a lost lock returns it too. It is the same value
	// as scheduler.ErrLockLost.
	ErrLockLost = lockprovider.ErrLockLost
	// ErrReleased is the cause of a Lock's Context after Release, and what
	// Extend returns on a released lock.
	ErrReleased = errors.New("baton: lock released")
	// ErrDeadlineTooSoon is returned by Acquire, together with
	// ErrNotAcquired, when the context's deadline leaves less time than one
	// round trip to the provider, so waiting could not succeed.
	ErrDeadlineTooSoon = errors.New("baton: context deadline too soon to acquire")
)

// errLateGrant: a grant arrived after its trust window had ended.
var errLateGrant = fmt.Errorf("%w: granted after its trust window ended", ErrLockLost)

// Bad input. Every validation error is a *ValidationError naming the field
// and matches ErrInvalid (and the more specific sentinel) with errors.Is.
var (
	ErrInvalid         = lockprovider.ErrInvalid
	ErrInvalidName     = lockprovider.ErrInvalidName
	ErrInvalidDuration = lockprovider.ErrInvalidDuration
	// ErrNilProvider is returned by NewLocker for a nil provider.
	ErrNilProvider = fmt.Errorf("%w: nil provider", lockprovider.ErrInvalid)
)

// ValidationError reports which input was rejected and why.
type ValidationError = lockprovider.ValidationError

// definite reports whether err is an answer rather than an unknown outcome.
func definite(err error) bool { return lockprovider.Definite(err) }
