package scheduler

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/baton-go/baton/lockprovider"
)

// ErrLockLost is the cause (see context.Cause) of a job's context when the
// job's lease ended while it ran: its local trust window passed, keep-alive
// or Run.Extend found the lease gone. It is the same value as
// baton.ErrLockLost.
var ErrLockLost = lockprovider.ErrLockLost

// Reasons for a skipped tick (Event.Err of Hooks.Skipped), re-exported so
// that hook code need not import lockprovider. They are the same values as
// lockprovider's and baton's.
var (
	// ErrNotAcquired: another replica holds the job's lock.
	ErrNotAcquired = lockprovider.ErrNotAcquired
	// ErrStaleTick: the tick, or a newer one, was already claimed.
	ErrStaleTick = lockprovider.ErrStaleTick
)

// ErrClosed is returned by methods of a Scheduler that was shut down, and is
// the cause of a running job's context when Shutdown's deadline passed or
// Close was called.
var ErrClosed = errors.New("scheduler: closed")

// ErrStillRunning is the reason a tick is skipped when the previous run of
// the same job on this instance has not returned yet.
var ErrStillRunning = errors.New("scheduler: previous run still running")

// ErrNotLocked is returned by Run.Extend for a job registered without Locked.
var ErrNotLocked = errors.New("scheduler: job is not locked")

// Registration errors. Each is reported inside a *ValidationError or a
// *SpecError; all of them match ErrInvalid with errors.Is.
var (
	ErrInvalid             = errors.New("scheduler: invalid argument")
	ErrInvalidSpec         = fmt.Errorf("%w: schedule", ErrInvalid)
	ErrInvalidName         = fmt.Errorf("%w: name", ErrInvalid)
	ErrDuplicateName       = fmt.Errorf("%w: duplicate job name", ErrInvalid)
	ErrNilJob              = fmt.Errorf("%w: nil job func", ErrInvalid)
	ErrInvalidDuration     = fmt.Errorf("%w: duration", ErrInvalid)
	ErrInvalidOption       = fmt.Errorf("%w: option", ErrInvalid)
	ErrCatchUpNotSupported = fmt.Errorf("%w: provider cannot report the last tick (no lockprovider.Inspector) for catch-up", ErrInvalid)
)

// ValidationError reports a rejected registration or configuration input.
type ValidationError struct {
	Job    string // job name, if known
	Field  string // e.g. "AtMostFor", "Name", "Every"
	Value  string // the rejected value, quoted and shortened
	Reason string
	Err    error // one of the ErrInvalid* sentinels
	Cause  error // an underlying error (e.g. a *lockprovider.ValidationError), or nil
}

func (e *ValidationError) Error() string {
	s := "scheduler: invalid " + e.Field
	if e.Job != "" {
		s += " of job " + strconv.Quote(e.Job)
	}
	if e.Value != "" {
		s += " " + e.Value
	}
	return s + ": " + e.Reason
}

// Unwrap returns the sentinel and the underlying cause, if any.
func (e *ValidationError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// SpecError reports an invalid cron spec: what is wrong and where.
type SpecError struct {
	Spec     string // the whole spec as given
	Field    string // "minute", "hour", "day of month", "month", "day of week", "second", "CRON_TZ", "TZ", "@every", "descriptor"; empty if the spec as a whole is wrong
	Position int    // 1-based position of the field among the schedule fields, or 0
	Value    string // the offending text
	Reason   string
	Err      error // the parser's error, or nil
}

func (e *SpecError) Error() string {
	s := "scheduler: cron spec " + strconv.Quote(e.Spec) + ": "
	switch {
	case e.Field != "" && e.Position > 0:
		s += fmt.Sprintf("field %d (%s) %q ", e.Position, e.Field, e.Value)
	case e.Field != "":
		s += fmt.Sprintf("%s %q ", e.Field, e.Value)
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrInvalidSpec and the parser's error, if any.
func (e *SpecError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidSpec, e.Err}
	}
	return []error{ErrInvalidSpec}
}

// PanicError is reported as the error of a job that panicked.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("scheduler: job panicked: %v", e.Value) }

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func invalid(job, field, value, reason string, sentinel, cause error) *ValidationError {
	if value != "" {
		if len(value) > 60 {
			value = value[:60] + "…"
		}
		value = strconv.Quote(value)
	}
	return &ValidationError{Job: job, Field: field, Value: value, Reason: reason, Err: sentinel, Cause: cause}
}
