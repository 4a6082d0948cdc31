package batontype

import (
	"strconv"
	"time"
)

// Outcome is how a recorded run ended.
type Outcome string

// Outcomes of a run. The empty Outcome means the run was started and its
// end was never recorded: it is still running, or its process died.
const (
	OutcomeRunning   Outcome = ""
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomePanicked  Outcome = "panicked"
	OutcomeLockLost  Outcome = "lock_lost"
	OutcomeShutDown  Outcome = "shut_down"
)

// Valid reports whether o is one of the outcomes a run can end with.
func (o Outcome) Valid() bool {
	switch o {
	case OutcomeSucceeded, OutcomeFailed, OutcomePanicked, OutcomeLockLost, OutcomeShutDown:
		return true
	}
	return false
}

// String returns the outcome's name, "running" for OutcomeRunning.
func (o Outcome) String() string {
	if o == OutcomeRunning {
		return "running"
	}
	return string(o)
}

// Limits of the ledger.
const (
	// MaxRunError is how many bytes of a run's error text are stored;
	// longer text is cut at a rune boundary and ends with "…".
	MaxRunError = 1024
	// MaxRunStack is how many bytes of a panicked run's stack are stored;
	// a longer stack is cut like an error text.
	MaxRunStack = 8 << 10
	// DefaultMaxRuns and DefaultMaxRunAge are the retention of a
	// zero Retention.
	DefaultMaxRuns   = 1000
	DefaultMaxRunAge = 30 * 24 * time.Hour
	// MaxRuns bounds Retention.MaxRuns.
	MaxRuns = 1_000_000
	// RetentionSlack is how many claims of a job may pass between two
	// trims of its runs (see Retention).
	RetentionSlack = 16
)

// Retention bounds the runs a ledger keeps per job: the newest MaxRuns
// runs, none that started more than MaxAge ago, up to an amortised slack.
// The zero value means DefaultMaxRuns and DefaultMaxRunAge.
//
// Trimming is amortised, the same on every provider: a claim does not
// trim, but of any RetentionSlack consecutive claims of a job at least one
// does (the claim that opens a run applies the retention it is given).
// So a job holds at most MaxRuns + RetentionSlack - 1 runs; right after a
// trim it holds at most MaxRuns, and none that started more than MaxAge
// before that claim. A run that aged out is gone by the RetentionSlack-th
// claim after. Lowering MaxRuns or MaxAge takes effect over a few trims
// (a trim may drop only 2 × RetentionSlack runs). A job that is no longer
// claimed is not trimmed: its runs stay (on Redis, the job's list expires
// MaxAge and a sixteenth after its last claim). A run whose record was
// trimmed before its release (it fell out of the retention while it ran)
// is not recorded again. The last success a ledger reports is the newest
// success still held: a job whose newest MaxRuns runs all failed may have
// none.
//
// Redis counts records, not runs: a run that ended has two (its start
// and its end, so that the release is one write), and a trim keeps the
// newest 2 × MaxRuns - 1 records. That is the newest MaxRuns runs when
// every run ended; runs that never ended take one record each, so up to
// 2 × MaxRuns - 1 of them stay.
type Retention struct {
	MaxRuns int
	MaxAge  time.Duration
}

// WithDefaults returns r with zero fields set to the defaults.
func (r Retention) WithDefaults() Retention {
	if r.MaxRuns == 0 {
		r.MaxRuns = DefaultMaxRuns
	}
	if r.MaxAge == 0 {
		r.MaxAge = DefaultMaxRunAge
	}
	return r
}

// Validate checks r.
func (r Retention) Validate() error {
	switch {
	case r.MaxRuns < 0 || r.MaxRuns > MaxRuns:
		return invalid("MaxRuns", strconv.Itoa(r.MaxRuns), "must be between 0 (default) and "+strconv.Itoa(MaxRuns), ErrInvalid)
	case r.MaxAge < 0 || (r.MaxAge > 0 && r.MaxAge < time.Second) || r.MaxAge > 10*MaxDuration:
		return invalid("MaxAge", r.MaxAge.String(), "must be 0 (default) or between 1s and "+(10*MaxDuration).String(), ErrInvalidDuration)
	}
	return nil
}

// RunQuery selects runs of one job from the ledger.
type RunQuery struct {
	Job   string
	Since time.Time // zero: no lower bound
	Until time.Time // zero: no upper bound
	Limit int       // 0 means 100; at most MaxRuns
}

// Validate checks q.
func (q RunQuery) Validate() error {
	if err := ValidateName(q.Job); err != nil {
		return err
	}
	if q.Limit < 0 || q.Limit > MaxRuns {
		return invalid("Limit", strconv.Itoa(q.Limit), "must be between 0 (default 100) and "+strconv.Itoa(MaxRuns), ErrInvalid)
	}
	return nil
}

// Lim returns q.Limit or its default.
func (q RunQuery) Lim() int {
	if q.Limit == 0 {
		return 100
	}
	return q.Limit
}

// RunRecord is one run of a job as the ledger recorded it. Started is the
// backend's clock at the grant; Finished is Started plus the run's
// duration as the caller measured it, or the backend's clock at the
// release.
type RunRecord struct {
	Job      string    `json:"job"`
	Tick     time.Time `json:"tick,omitzero"`     // the tick claimed (zero for a run without one)
	LockedBy string    `json:"locked_by"`         // the replica that ran it
	Token    int64     `json:"token"`             // the fencing token of its lease
	Started  time.Time `json:"started"`           // the lease's grant
	Finished time.Time `json:"finished,omitzero"` // zero while running, or if the process died
	Outcome  Outcome   `json:"outcome"`
	Error    string    `json:"error,omitempty"`
	CatchUp  bool      `json:"catch_up,omitempty"`
	Manual   bool      `json:"manual,omitempty"`
	// Stack is the goroutine's stack of a run that panicked, cut to
	// MaxRunStack bytes; empty otherwise.
	Stack string `json:"stack,omitempty"`
	// ReleasedAt is when an operator force-released the run's lease
	// (lockprovider.Admin.ForceRelease), by the backend's clock; zero if
	// nobody did. ReleasedBy is who, as the admin action named itself
	// (the CLI "cli:USER@HOST", the status page "page:REMOTE-ADDRESS");
	// it may be empty for a release that gave no name. The run's own
	// end, recorded later by its holder, keeps both.
	ReleasedBy string    `json:"released_by,omitempty"`
	ReleasedAt time.Time `json:"released_at,omitzero"`
}

// Duration is Finished - Started, or zero for a run without an end.
func (r RunRecord) Duration() time.Duration {
	if r.Finished.IsZero() {
		return 0
	}
	return r.Finished.Sub(r.Started)
}
