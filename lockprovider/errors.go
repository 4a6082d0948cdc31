package lockprovider

import (
	"errors"
	"fmt"
)

// Definite outcomes of lease operations.
var (
	// ErrNotAcquired means the name is held by another owner.
	ErrNotAcquired = errors.New("lockprovider: lock held by another owner")
	// ErrNotHeld means the presented owner token does not hold the lease:
	// it expired, was released, or passed to another owner.
	ErrNotHeld = errors.New("lockprovider: lock not held by this owner")
	// ErrStaleTick means the name was already granted for this tick or a
	// newer one.
	ErrStaleTick = errors.New("lockprovider: tick not newer than the last granted tick")
)

// ErrLockLost is what consumers (package baton's Lock.Context, the
// scheduler's job context) report as the cause when a holder can no longer
// trust its lease. It is defined here, not in each consumer, so that one
// errors.Is check covers locks and scheduled jobs alike.
var ErrLockLost = errors.New("baton: lock lost")

// Validation errors. Each is wrapped by a *ValidationError that names the
// offending field; all of them match ErrInvalid with errors.Is.
var (
	ErrInvalid         = errors.New("lockprovider: invalid argument")
	ErrInvalidName     = fmt.Errorf("%w: name", ErrInvalid)
	ErrInvalidOwner    = fmt.Errorf("%w: owner token", ErrInvalid)
	ErrInvalidDuration = fmt.Errorf("%w: duration", ErrInvalid)
)

// ValidationError reports which input was rejected and why.
type ValidationError struct {
	Field  string // the parameter, e.g. "Name" or "AtLeastFor"
	Value  string // the rejected value, quoted and shortened for logs
	Reason string
	Err    error // one of the ErrInvalid* sentinels
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("lockprovider: invalid %s %s: %s", e.Field, e.Value, e.Reason)
}

func (e *ValidationError) Unwrap() error { return e.Err }

// ErrUnavailable means the backend could not be reached or did not answer
// in time. It never matches ErrNotAcquired: an outage is not a "no". Errors
// matching it are *UnavailableError values, which say whether the request
// may have reached the backend.
var ErrUnavailable = errors.New("lockprovider: backend unavailable")

// UnavailableError reports that the backend could not be reached or did not
// answer in time. It matches ErrUnavailable and unwraps to the cause.
type UnavailableError struct {
	// NotSent is true when the request is known never to have reached the
	// backend (a refused dial, a closed pool): the outcome is definite,
	// nothing changed. Otherwise the outcome is unknown.
	NotSent bool
	Err     error
}

func (e *UnavailableError) Error() string {
	if e.NotSent {
		return "lockprovider: backend unavailable (request not sent): " + e.Err.Error()
	}
	return "lockprovider: backend unavailable: " + e.Err.Error()
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Definite reports whether err is an answer rather than an unknown outcome:
// nil, a refusal (ErrNotAcquired, ErrNotHeld, ErrStaleTick), bad input
// (ErrInvalid), or an unavailability known not to have reached the backend.
// After any other error the operation may or may not have taken effect.
func Definite(err error) bool {
	if err == nil || errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNotHeld) ||
		errors.Is(err, ErrStaleTick) || errors.Is(err, ErrInvalid) {
		return true
	}
	var u *UnavailableError
	return errors.As(err, &u) && u.NotSent
}
