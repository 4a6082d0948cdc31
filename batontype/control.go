package batontype

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// RunRequest is a request to run a job now, which exactly one replica
// claims.
type RunRequest struct {
	ID          string    `json:"id"`                     // set when the request is recorded
	Job         string    `json:"job"`                    // the job to run
	RequestedBy string    `json:"requested_by,omitempty"` // who asked, for operators (informational)
	Requested   time.Time `json:"requested"`              // backend clock; set when recorded
	Until       time.Time `json:"until"`                  // the request lapses then unless claimed

	// TTL is how long the request stays pending (an input when the
	// request is made). Zero means DefaultRunRequestTTL.
	TTL time.Duration `json:"-"`
}

// Run request lifetimes.
const (
	DefaultRunRequestTTL = 10 * time.Minute
	MinRunRequestTTL     = time.Second
	MaxRunRequestTTL     = 24 * time.Hour
)

// Validate checks the inputs of a new request: Job, RequestedBy and TTL,
// and that ID is empty (the provider sets it).
func (r RunRequest) Validate() error {
	if err := ValidateName(r.Job); err != nil {
		return err
	}
	if err := validateText("RequestedBy", r.RequestedBy, MaxLockedByLen, ErrInvalid, false); err != nil {
		return err
	}
	if r.ID != "" {
		return invalid("ID", r.ID, "is set by the provider and must be empty", ErrInvalid)
	}
	if r.TTL != 0 && (r.TTL < MinRunRequestTTL || r.TTL > MaxRunRequestTTL) {
		return invalid("TTL", r.TTL.String(), "must be 0 (default "+DefaultRunRequestTTL.String()+") or between "+
			MinRunRequestTTL.String()+" and "+MaxRunRequestTTL.String(), ErrInvalidDuration)
	}
	return nil
}

// WithDefaults returns r with a zero TTL set to DefaultRunRequestTTL and a
// fresh ID (128 random bits, hex), as a provider records it.
func (r RunRequest) WithDefaults() RunRequest {
	if r.TTL == 0 {
		r.TTL = DefaultRunRequestTTL
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24
	r.ID = hex.EncodeToString(b[:])
	return r
}

// ValidateRunRequestID checks the id of a run request to claim.
func ValidateRunRequestID(id string) error {
	return validateText("ID", id, MaxOwnerLen, ErrInvalid, true)
}

// ControlState is the operators' control of the scheduled jobs as a
// backend holds it: the jobs paused cluster-wide, the pending run
// requests, and the known pause spans.
type ControlState struct {
	Paused   []string     `json:"paused"`   // jobs paused cluster-wide, sorted
	Requests []RunRequest `json:"requests"` // pending requests, oldest first
	// Pauses are the cluster-wide pause spans the backend remembers:
	// per job, its latest ended pause and its current one (if it is
	// paused), sorted by job then From. Ticks inside a span were skipped
	// on purpose, not missed. Older pauses are forgotten, and a flag set
	// by a version that did not record its start has no span.
	Pauses []PauseSpan `json:"pauses"`
}

// PauseSpan is one cluster-wide pause of a job, on the backend's clock:
// from its SetPaused(true) to its SetPaused(false). Until is zero while
// the job is still paused.
type PauseSpan struct {
	Job   string    `json:"job"`
	From  time.Time `json:"from"`
	Until time.Time `json:"until,omitzero"`
}

// Covers reports whether t falls within the span: From <= t <= Until, or
// From <= t while the job is still paused.
func (p PauseSpan) Covers(t time.Time) bool {
	return !t.Before(p.From) && (p.Until.IsZero() || !t.After(p.Until))
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

// PausesOf returns the pause spans of job in s.Pauses, oldest first.
func (s ControlState) PausesOf(job string) []PauseSpan {
	var out []PauseSpan
	for _, p := range s.Pauses {
		if p.Job == job {
			out = append(out, p)
		}
	}
	return out
}

// InPause reports whether t falls within one of spans (one job's, see
// ControlState.PausesOf): a tick then was skipped on purpose, not missed.
func InPause(spans []PauseSpan, t time.Time) bool {
	return slices.ContainsFunc(spans, func(p PauseSpan) bool { return p.Covers(t) })
}

// SortPauses sorts pause spans by job, then From, as
// ControlState.Pauses lists them.
func SortPauses(spans []PauseSpan) {
	slices.SortFunc(spans, func(a, b PauseSpan) int {
		return cmp.Or(strings.Compare(a.Job, b.Job), a.From.Compare(b.From))
	})
}
