package scheduler

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/scheduler/internal/schedule"
)

// ErrLockLost is the cause (see context.Cause) of a job's context when the
// job's lease ended while it ran: its local trust window passed, keep-alive
// or Run.Extend found the lease gone. It is the same value as
// baton.ErrLockLost.
var ErrLockLost = batontype.ErrLockLost

// ErrClosed is returned by methods of a Scheduler that was shut down, and is
// the cause of a running job's context when Shutdown's deadline passed or
// Close was called.
var ErrClosed = errors.New("scheduler: closed")

// ErrNilContext is returned by Scheduler.RunNow, Pause and Resume (and
// jobstate.Check) for a nil context, instead of a panic. It is the same
// value as baton.ErrNilContext (batontype.ErrNilContext) and matches
// ErrInvalid.
var ErrNilContext = batontype.ErrNilContext

// ErrStillRunning is the reason a tick is skipped when the previous run of
// the same job on this instance has not returned yet.
var ErrStillRunning = errors.New("scheduler: previous run still running")

// ErrMissed is the reason reported (as a *MissedError) for ticks that
// passed while this process could not fire them: it was paused, its VM
// suspended, or the wall clock stepped forward. The scheduler runs only
// the latest of them; the others are skipped here (another replica may
// have run them).
var ErrMissed = errors.New("scheduler: ticks passed while this process could not fire them")

// MissedError reports the ticks of one job that this process skipped
// because they passed while it could not fire them: First to Last, every
// tick of the schedule between them included. It matches ErrMissed.
type MissedError struct {
	First, Last time.Time
}

func (e *MissedError) Error() string {
	if e.First.Equal(e.Last) {
		return fmt.Sprintf("%v: tick %s", ErrMissed, e.First.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%v: ticks %s to %s", ErrMissed, e.First.Format(time.RFC3339Nano), e.Last.Format(time.RFC3339Nano))
}

func (e *MissedError) Unwrap() error { return ErrMissed }

// ErrNotLocked is returned by Run.Extend and Run.Check for a job registered
// without Locked.
var ErrNotLocked = errors.New("scheduler: job is not locked")

// Skip reasons, re-exported from lockprovider so that hook code can tell
// them apart without importing it. They are the same values.
var (
	// ErrNotAcquired: another replica holds the job's lock.
	ErrNotAcquired = batontype.ErrNotAcquired
	// ErrStaleTick: the tick was already granted (it ran, or runs,
	// elsewhere).
	ErrStaleTick = batontype.ErrStaleTick
	// ErrUnavailable: the backend could not be reached or did not answer in
	// time.
	ErrUnavailable = batontype.ErrUnavailable
)

// Registration errors. Each is reported inside a *ValidationError or a
// *SpecError; all of them match ErrInvalid, which is batontype.ErrInvalid
// (and baton.ErrInvalid), with errors.Is.
var (
	ErrInvalid             = batontype.ErrInvalid
	ErrInvalidName         = batontype.ErrInvalidName
	ErrInvalidDuration     = batontype.ErrInvalidDuration
	ErrInvalidSpec         = schedule.ErrInvalidSpec
	ErrDuplicateName       = fmt.Errorf("%w: duplicate job name", ErrInvalid)
	ErrNilJob              = fmt.Errorf("%w: nil job func", ErrInvalid)
	ErrInvalidOption       = fmt.Errorf("%w: option", ErrInvalid)
	ErrCatchUpNotSupported = fmt.Errorf("%w: provider cannot report the last tick (no lockprovider.Inspector) for catch-up", ErrInvalid)
)

// ValidationError reports a rejected registration or configuration input;
// its Job field names the job. It is batontype.ValidationError, the one
// validation error type of the module.
type ValidationError = batontype.ValidationError

// SpecError reports an invalid cron spec: what is wrong and where. Its
// fields are Spec (the whole spec as given), Field ("minute", "hour",
// "day of month", "month", "day of week", "second", "CRON_TZ", "TZ",
// "@every", "descriptor", "time zone"; empty if the spec as a whole is
// wrong), Position (1-based position of the field among the schedule
// fields, or 0), Value (the offending text), Reason, and Err (the
// parser's error, or nil). It unwraps to ErrInvalidSpec and Err.
type SpecError = schedule.SpecError

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

// Limits on echoed input in error texts (ValidationError.Error and
// SpecError.Error apply the same limits).
const (
	maxEcho   = 64
	maxReason = 256
)

func invalid(job, field, value, reason string, sentinel, cause error) *ValidationError {
	if value != "" {
		value = strconv.Quote(batontype.Shorten(value, maxEcho))
	}
	return &ValidationError{Pkg: "scheduler", Job: job, Field: field, Value: value, Reason: reason, Err: sentinel, Cause: cause}
}

// withJob returns err with the job's name: a copy of a *ValidationError
// with Job set, or err itself.
func withJob(job string, err error) error {
	ve, ok := err.(*ValidationError)
	if !ok {
		return err
	}
	c := *ve
	c.Job = job
	if c.Pkg == "" {
		c.Pkg = "scheduler"
	}
	return &c
}
