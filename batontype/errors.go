package batontype

import (
	"errors"
	"fmt"
	"strings"
)

// The texts of the sentinels below carry no package prefix: callers wrap
// them once with their own operation and name ("baton: acquire "x": lock
// held by another owner"), the way fs.ErrNotExist is wrapped by a
// *fs.PathError.

// Definite outcomes of lease operations.
var (
	// ErrNotAcquired means the name is held by another owner. It is only
	// ever reported after the backend said so.
	ErrNotAcquired = errors.New("lock held by another owner")
	// ErrNotHeld means the presented owner token does not hold the lease:
	// it expired, was released, or passed to another owner.
	ErrNotHeld = errors.New("lock not held by this owner")
	// ErrStaleTick means the name was already granted for this tick or a
	// newer one.
	ErrStaleTick = errors.New("tick not newer than the last granted tick")
)

// ErrLockLost is the cause consumers (package baton's Lock.Context, the
// scheduler's job context) report when a holder can no longer trust its
// lease. It is defined once so that one errors.Is check covers locks and
// scheduled jobs alike.
var ErrLockLost = errors.New("lock lost")

// ErrNoRequest is returned when a run request is not pending: another
// replica claimed it, it expired, or it never existed.
var ErrNoRequest = errors.New("no such pending run request")

// ErrNotRegistered is returned by a registry heartbeat when the instance
// has no live entry: it expired, or was never made.
var ErrNotRegistered = errors.New("instance not registered")

// Validation errors. Each is wrapped by a *ValidationError that names the
// offending field; all of them match ErrInvalid with errors.Is. Every
// package of the module reports bad input this way, so one errors.Is(err,
// ErrInvalid) check covers them all.
var (
	ErrInvalid         = errors.New("invalid argument")
	ErrInvalidName     = fmt.Errorf("%w: name", ErrInvalid)
	ErrInvalidOwner    = fmt.Errorf("%w: owner token", ErrInvalid)
	ErrInvalidDuration = fmt.Errorf("%w: duration", ErrInvalid)
	ErrInvalidLimit    = fmt.Errorf("%w: rate limit", ErrInvalid)
	ErrInvalidCost     = fmt.Errorf("%w: cost", ErrInvalid)
	// ErrExceedsCapacity means the cost can never be admitted: it is
	// above the capacity of one of the limits.
	ErrExceedsCapacity = fmt.Errorf("%w: cost exceeds capacity", ErrInvalid)
	// ErrNotReservable means a reservation or refund asked of a window
	// algorithm.
	ErrNotReservable = fmt.Errorf("%w: algorithm cannot reserve", ErrInvalid)
)

// ErrNilContext is what every function and method of the module that takes
// a context returns for a nil one, before touching a backend: drivers
// dereference the context and would panic. It is a *ValidationError for
// the field "ctx" and matches ErrInvalid.
var ErrNilContext error = &ValidationError{Field: "ctx", Value: "nil", Reason: "must not be nil (use context.Background)", Err: ErrInvalid}

// ErrNilProvider is what every constructor that takes a provider (or a
// consumer of one, such as a Locker or a Limiter) returns for a nil one,
// a typed nil pointer included. It is a *ValidationError matching
// ErrInvalid.
var ErrNilProvider error = &ValidationError{Field: "provider", Value: "nil", Reason: "must not be nil", Err: ErrInvalid}

// ValidationError reports which input was rejected and why. It is the one
// validation error type of the module: every package returns it for bad
// input.
type ValidationError struct {
	// Pkg is the package that rejected the input, e.g. "scheduler"; it
	// prefixes the message. Empty reads "baton".
	Pkg    string
	Job    string // the scheduled job the input belongs to, if any
	Field  string // the parameter, e.g. "Name" or "AtLeastFor"
	Value  string // the rejected value, quoted; Error shortens it
	Reason string
	Err    error // one of the ErrInvalid* sentinels, or a sentinel wrapping ErrInvalid
	Cause  error // an underlying error (e.g. a nested *ValidationError), or nil
}

// Limits on what Error echoes: a rejected value may be as long as the
// caller made it, and an error message must stay short enough for a log.
const (
	maxEcho   = 64  // bytes of Job, Field and Value
	maxReason = 256 // bytes of Reason
)

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Pkg != "" {
		b.WriteString(e.Pkg)
	} else {
		b.WriteString("baton")
	}
	b.WriteString(": invalid ")
	b.WriteString(Shorten(e.Field, maxEcho))
	if e.Job != "" && fmt.Sprintf("%q", e.Job) != e.Value { // not twice
		b.WriteString(" of job ")
		b.WriteString(Shorten(fmt.Sprintf("%q", e.Job), maxEcho))
	}
	if e.Value != "" {
		b.WriteByte(' ')
		b.WriteString(Shorten(e.Value, maxEcho))
	}
	b.WriteString(": ")
	b.WriteString(Shorten(e.Reason, maxReason))
	return b.String()
}

// InPkg names pkg as the package that rejected the input: when err is a
// *ValidationError without Pkg, it returns a copy with Pkg set; any other
// error, and nil, it returns as it is. A package calls it where it
// returns a shared validator's error (ValidateName, a Validate method).
func InPkg(pkg string, err error) error {
	ve, ok := err.(*ValidationError)
	if !ok || ve.Pkg != "" {
		return err
	}
	c := *ve
	c.Pkg = pkg
	return &c
}

// Unwrap returns the sentinel and the underlying cause, if any.
func (e *ValidationError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// ErrUnavailable means the backend could not be reached or did not answer
// in time. It never matches ErrNotAcquired: an outage is not a "no". Errors
// matching it are *UnavailableError values, which say whether the request
// may have reached the backend.
var ErrUnavailable = errors.New("backend unavailable")

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
		return "backend unavailable (request not sent): " + e.Err.Error()
	}
	return "backend unavailable: " + e.Err.Error()
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
	return NotSent(err)
}

// NotSent reports whether err is an unavailability known not to have
// reached the backend (a *UnavailableError with NotSent set).
func NotSent(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u) && u.NotSent
}
