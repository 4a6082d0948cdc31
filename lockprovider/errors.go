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
