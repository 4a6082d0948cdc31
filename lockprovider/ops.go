package lockprovider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Operator capabilities: admin actions, the run ledger and the job
// registry. Each is optional and discovered by type assertion, like
// Inspector.

// Admin is implemented by providers that let operators act on the
// backend.
type Admin interface {
	// ForceRelease ends the lease in force on name whoever holds it, even
	// inside its AtLeastFor bound, announces the release as Release does
	// (so waiters wake at once), and returns what it freed: holder,
	// token, grant and expiry. The next grant's token is larger than the
	// freed one, so fenced resources reject the old holder's writes once
	// the next holder has written; the old holder learns of the loss at
	// its next Extend (ErrNotHeld) or when its trust window ends. A
	// non-zero token makes the release conditional: only the lease with
	// that token is freed, so an operator who confirmed a holder never
	// frees its successor. It returns ErrNotHeld when no lease (or not
	// the one with token) is in force.
	ForceRelease(ctx context.Context, name string, token int64) (LeaseInfo, error)

	// ResetRate removes every limit's state of a rate-limit key, so the
	// key starts again with full capacity. Resetting a key without state
	// is not an error.
	ResetRate(ctx context.Context, key string) error

	// Ping checks that the backend answers, for readiness probes.
	Ping(ctx context.Context) error
}

// RateLister is implemented by providers that can list the rate-limit
// state they hold. Only keys with live state are listed: a key whose
// state expired is back at full capacity. The stored state does not say
// what the limit is (the application passes it with every request), so a
// listing reports when each key is full again, not how many units remain;
// RateLimiter.RateLimit with N 0 and the application's limits reports
// Remaining for one key.
type RateLister interface {
	ListRates(ctx context.Context) ([]RateInfo, error)
}

// RateInfo is the stored state of one limit of one rate-limit key.
type RateInfo struct {
	Key       string
	Algorithm Algorithm
	Period    time.Duration
	// ResetAt is when the limit is back at full capacity if nothing else
	// arrives (backend clock): when its state expires.
	ResetAt time.Time
}

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
// is not recorded again. Ledger.LastRuns' last success is the newest
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

// Ledger is implemented by providers that keep a record of scheduled
// runs. AcquireRun and ReleaseRun are Acquire and Release that also open
// and complete the run's record, in the same round trip, so recording
// costs no extra call and a run whose process died still shows that it
// started.
type Ledger interface {
	// AcquireRun is Provider.Acquire; when it grants a new lease, it also
	// records a started run for the name: tick, LockedBy, token, the
	// grant time as Started, and run's flags. It then applies
	// run.Retention, amortised (see Retention).
	AcquireRun(ctx context.Context, p AcquireParams, run RunStart) (Lease, error)

	// ReleaseRun is Provider.Release and also records the end of run
	// (identified by run.Job and run.Token): Finished (see
	// RunEnd.Elapsed), Outcome and Error. The end is recorded even when the release
	// returns ErrNotHeld, so a run whose lease was lost still gets its
	// outcome.
	ReleaseRun(ctx context.Context, p ReleaseParams, run RunEnd) error

	// Runs returns the recorded runs of q.Job that started in [q.Since,
	// q.Until), newest first, at most q.Limit of them.
	Runs(ctx context.Context, q RunQuery) ([]RunRecord, error)

	// LastRuns returns the newest run of job and its newest successful
	// run that the ledger still holds (see Retention), each with Token 0
	// when there is none.
	LastRuns(ctx context.Context, job string) (last, lastSuccess RunRecord, err error)
}

// RunStart describes the run that AcquireRun opens.
type RunStart struct {
	CatchUp   bool // the run catches up a tick no replica ran
	Manual    bool // the run was asked for by an operator, not by the schedule
	Retention Retention
}

// Validate checks r.
func (r RunStart) Validate() error { return r.Retention.Validate() }

// RunEnd describes how a run ended, for ReleaseRun. Job, Token, Tick,
// LockedBy, Started and the flags repeat what AcquireRun recorded, so
// that a provider can store the whole record with the end.
type RunEnd struct {
	Run     RunRecord // Job, Token, Tick, LockedBy, Started, CatchUp, Manual
	Outcome Outcome   // one of the valid outcomes
	Error   string    // the error text; stored cut to MaxRunError bytes
	// Elapsed is how long the run took, measured by the caller on its
	// monotonic clock from the claim's answer to the release. When set,
	// the run is recorded as finished at its start plus Elapsed, on every
	// provider: the duration is then the caller's measure whatever the
	// backend's clock does, and the Redis release needs no clock read.
	// Zero records the backend's clock at the release.
	Elapsed   time.Duration
	Retention Retention
}

// Finished is Run.Started + Elapsed, for a provider that records the end
// without looking up the start (see Elapsed); ok is false when either is
// unset.
func (e RunEnd) Finished() (t time.Time, ok bool) {
	if e.Elapsed <= 0 || e.Run.Started.IsZero() {
		return time.Time{}, false
	}
	return e.Run.Started.Add(e.Elapsed), true
}

// Validate checks e.
func (e RunEnd) Validate() error {
	if err := ValidateName(e.Run.Job); err != nil {
		return err
	}
	if e.Run.Token == 0 {
		return invalid("Token", "0", "must be the run's fencing token", ErrInvalid)
	}
	if e.Elapsed < 0 || e.Elapsed > 10*MaxDuration {
		return invalid("Elapsed", e.Elapsed.String(), "must be between 0 and "+(10*MaxDuration).String(), ErrInvalidDuration)
	}
	if !e.Outcome.Valid() {
		return invalid("Outcome", string(e.Outcome), "is not a run outcome", ErrInvalid)
	}
	if err := validateText("LockedBy", e.Run.LockedBy, MaxLockedByLen, ErrInvalid, false); err != nil {
		return err
	}
	return e.Retention.Validate()
}

// RunQuery selects runs for Ledger.Runs.
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
// release (see RunEnd.Elapsed).
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
}

// Duration is Finished - Started, or zero for a run without an end.
func (r RunRecord) Duration() time.Duration {
	if r.Finished.IsZero() {
		return 0
	}
	return r.Finished.Sub(r.Started)
}

// CutError bounds s to MaxRunError bytes at a rune boundary, ending a cut
// text with "…", and replaces control characters other than newline and
// tab, so every provider stores the same text.
func CutError(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= MaxRunError {
		return s
	}
	const ell = "…"
	cut := MaxRunError - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}

// Registry is implemented by providers that keep the job registry: each
// scheduler instance publishes its jobs and a heartbeat, and tools outside
// the process read which jobs exist and which instances are alive.
type Registry interface {
	// Register publishes inst (its jobs included) for ttl: the entry
	// disappears unless Register or Heartbeat renews it within ttl. The
	// backend sets Heartbeat and Until.
	Register(ctx context.Context, inst Instance, ttl time.Duration) error

	// Heartbeat renews the entry of the instance named lockedBy for ttl
	// without resending its jobs. It returns ErrNotRegistered when the
	// entry is gone (it expired, or was never made): register again.
	Heartbeat(ctx context.Context, lockedBy string, ttl time.Duration) error

	// Deregister removes the entry of lockedBy at once. Removing an
	// entry that does not exist is not an error.
	Deregister(ctx context.Context, lockedBy string) error

	// Instances returns the live entries, sorted by LockedBy.
	Instances(ctx context.Context) ([]Instance, error)
}

// ErrNotRegistered is returned by Registry.Heartbeat when the instance has
// no live entry.
var ErrNotRegistered = errors.New("lockprovider: instance not registered")

// Instance is one scheduler instance as the registry knows it.
type Instance struct {
	LockedBy  string    `json:"locked_by"` // unique per instance; the LockedBy of its leases
	Version   string    `json:"version,omitempty"`
	Started   time.Time `json:"started"`   // when the instance started (its own clock)
	Heartbeat time.Time `json:"heartbeat"` // last Register or Heartbeat (backend clock)
	Until     time.Time `json:"until"`     // the entry expires then (backend clock)
	Jobs      []JobSpec `json:"jobs"`
}

// JobSpec is a job as its scheduler registered it.
type JobSpec struct {
	Name string `json:"name"`
	// Schedule is the spec in the scheduler's syntax: a cron spec, or
	// "@every <duration>" optionally followed by " offset <duration>".
	Schedule   string        `json:"schedule"`
	TimeZone   string        `json:"time_zone,omitempty"` // IANA zone of a cron spec
	Locked     bool          `json:"locked"`
	AtMostFor  time.Duration `json:"at_most_for,omitempty"`
	AtLeastFor time.Duration `json:"at_least_for,omitempty"`
	Options    []string      `json:"options,omitempty"` // e.g. "auto_renew", "catch_up"
}

// Registry limits.
const (
	MinRegistryTTL = time.Second
	MaxJobsPerInst = 100_000
)

// Validate checks inst and ttl.
func (inst Instance) Validate(ttl time.Duration) error {
	if err := validateText("LockedBy", inst.LockedBy, MaxLockedByLen, ErrInvalid, true); err != nil {
		return err
	}
	if err := validateText("Version", inst.Version, MaxLockedByLen, ErrInvalid, false); err != nil {
		return err
	}
	if err := ValidateRegistryTTL(ttl); err != nil {
		return err
	}
	if len(inst.Jobs) > MaxJobsPerInst {
		return invalid("Jobs", strconv.Itoa(len(inst.Jobs))+" jobs", "more than "+strconv.Itoa(MaxJobsPerInst), ErrInvalid)
	}
	for _, j := range inst.Jobs {
		if err := ValidateName(j.Name); err != nil {
			return err
		}
		if err := validateText("Schedule", j.Schedule, 1000, ErrInvalid, true); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRegistryTTL checks a registry entry's lifetime.
func ValidateRegistryTTL(ttl time.Duration) error {
	if ttl < MinRegistryTTL || ttl > MaxDuration {
		return invalid("TTL", ttl.String(), fmt.Sprintf("must be between %v and %v", MinRegistryTTL, MaxDuration), ErrInvalidDuration)
	}
	return nil
}

// ValidateLockedBy checks an instance name for Heartbeat and Deregister.
func ValidateLockedBy(lockedBy string) error {
	return validateText("LockedBy", lockedBy, MaxLockedByLen, ErrInvalid, true)
}
