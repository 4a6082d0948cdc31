package batontype

import (
	"crypto/rand"
	"encoding/hex"
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
// backend holds it: the jobs paused cluster-wide and the pending run
// requests.
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
