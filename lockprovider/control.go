package lockprovider

import (
	"context"
	"errors"
	"time"
)

// Control is implemented by providers that carry operators' control of
// scheduled jobs between the replicas of an application: a cluster-wide
// paused flag per job, and requests to run a job now that exactly one
// replica claims. Like the other capabilities it is optional and
// discovered by type assertion. Every method is one round trip.
type Control interface {
	// SetPaused sets (paused true) or clears the cluster-wide paused flag
	// of job and announces the change to watchers. Setting a flag that is
	// set, or clearing one that is not, is not an error. A flag lasts
	// until it is cleared; providers whose keys must expire keep it for
	// their record lifetime after the last change (see their docs).
	SetPaused(ctx context.Context, job string, paused bool) error

	// RequestRun records a request to run r.Job now and announces it. The
	// request stays pending until a ClaimRun takes it or r.TTL passes. It
	// returns the request with ID (128 random bits, hex), Requested and
	// Until (backend clock) set.
	RequestRun(ctx context.Context, r RunRequest) (RunRequest, error)

	// ClaimRun removes the pending request id and returns it. Of any
	// number of concurrent callers exactly one gets it; the others, and
	// callers of a request that expired or never existed, get
	// ErrNoRequest.
	ClaimRun(ctx context.Context, id string) (RunRequest, error)

	// ControlState returns the jobs paused cluster-wide and the pending
	// requests. Expired requests are dropped on the way.
	ControlState(ctx context.Context) (ControlState, error)

	// WatchControl arranges a non-blocking send on ch each time SetPaused
	// or RequestRun is called on any provider of the same backend, and
	// after the provider re-established a lost subscription (changes may
	// have gone unheard). Announcements are not guaranteed: watchers
	// still poll ControlState. stop cancels the registration; it is safe
	// to call more than once, and no goroutine of the registration
	// outlives it.
	WatchControl(ctx context.Context, ch chan<- struct{}) (stop func(), err error)
}

// RunRequest is a request to run a job now.
type RunRequest struct {
	ID          string    `json:"id"`                     // set by RequestRun
	Job         string    `json:"job"`                    // the job to run
	RequestedBy string    `json:"requested_by,omitempty"` // who asked, for operators (informational)
	Requested   time.Time `json:"requested"`              // backend clock; set by RequestRun
	Until       time.Time `json:"until"`                  // the request lapses then unless claimed

	// TTL is how long the request stays pending (RequestRun's input).
	// Zero means DefaultRunRequestTTL.
	TTL time.Duration `json:"-"`
}

// ControlState is what ControlState reports.
type ControlState struct {
	Paused   []string     `json:"paused"`   // jobs paused cluster-wide, sorted
	Requests []RunRequest `json:"requests"` // pending requests, oldest first
}

// IsPaused reports whether job is in s.Paused.
func (s ControlState) IsPaused(job string) bool {
	for _, p := range s.Paused {
		if p == job {
			return true
		}
	}
	return false
}

// ErrNoRequest is returned by Control.ClaimRun when the request is not
// pending: another caller claimed it, it expired, or it never existed.
var ErrNoRequest = errors.New("lockprovider: no such pending run request")

// Run request lifetimes.
const (
	DefaultRunRequestTTL = 10 * time.Minute
	MinRunRequestTTL     = time.Second
	MaxRunRequestTTL     = 24 * time.Hour
)

// Validate checks the inputs of RequestRun: Job, RequestedBy and TTL,
// and that ID is empty (RequestRun sets it).
func (r RunRequest) Validate() error {
	if err := ValidateName(r.Job); err != nil {
		return err
	}
	if err := validateText("RequestedBy", r.RequestedBy, MaxLockedByLen, ErrInvalid, false); err != nil {
		return err
	}
	if r.ID != "" {
		return invalid("ID", r.ID, "is set by RequestRun and must be empty", ErrInvalid)
	}
	if r.TTL != 0 && (r.TTL < MinRunRequestTTL || r.TTL > MaxRunRequestTTL) {
		return invalid("TTL", r.TTL.String(), "must be 0 (default "+DefaultRunRequestTTL.String()+") or between "+
			MinRunRequestTTL.String()+" and "+MaxRunRequestTTL.String(), ErrInvalidDuration)
	}
	return nil
}

// WithDefaults returns r with a zero TTL set to DefaultRunRequestTTL and a
// fresh ID.
func (r RunRequest) WithDefaults() RunRequest {
	if r.TTL == 0 {
		r.TTL = DefaultRunRequestTTL
	}
	r.ID = NewOwner()
	return r
}

// ValidateRunRequestID checks the id given to ClaimRun.
func ValidateRunRequestID(id string) error {
	return validateText("ID", id, MaxOwnerLen, ErrInvalid, true)
}

// ValidateWatch checks the channel given to WatchControl.
func ValidateWatch(ch chan<- struct{}) error {
	if ch == nil {
		return &ValidationError{Field: "ch", Value: "nil", Reason: "must not be nil", Err: ErrInvalid}
	}
	return nil
}
