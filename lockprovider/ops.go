package lockprovider

import (
	"context"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Operator capabilities: admin actions, the run ledger and the job
// registry. Each is optional and discovered by type assertion, like
// Inspector.

// Admin is implemented by providers that let operators act on the
// backend.
type Admin interface {
	// ForceRelease ends the lease in force on p.Name whoever holds it,
	// even inside its AtLeastFor bound, announces the release as Release
	// does (so waiters wake at once), and returns what it freed: holder,
	// token, grant and expiry. The next grant's token is larger than the
	// freed one, so fenced resources reject the old holder's writes once
	// the next holder has written; the old holder learns of the loss at
	// its next Extend (batontype.ErrNotHeld) or when its trust window
	// ends. A non-zero p.Token makes the release conditional: only the
	// lease with that token is freed, so an operator who confirmed a
	// holder never frees its successor. It returns batontype.ErrNotHeld
	// when no lease (or not the one with p.Token) is in force.
	//
	// A provider that is also a Ledger marks the run the freed lease
	// belongs to (the record of p.Name with the freed token), in the same
	// round trip: RunRecord.ReleasedBy p.By and ReleasedAt the release's
	// time. A lease that opened no run (a plain lock, or a run trimmed
	// from the ledger) marks nothing.
	ForceRelease(ctx context.Context, p ForceReleaseParams) (batontype.LeaseInfo, error)

	// ResetRate removes every limit's state of a rate-limit key, so the
	// key starts again with full capacity. Resetting a key without state
	// is not an error.
	ResetRate(ctx context.Context, key string) error

	// Ping checks that the backend answers, for readiness probes.
	Ping(ctx context.Context) error
}

// ForceReleaseParams are the arguments of Admin.ForceRelease.
type ForceReleaseParams struct {
	Name string
	// Token, when not zero, frees the lease only if it has this token.
	Token int64
	// By names the operator for the ledger (see RunRecord.ReleasedBy):
	// optional, at most batontype.MaxLockedByLen bytes without control
	// characters. The CLI passes "cli:USER@HOST", the status page
	// "page:REMOTE-ADDRESS".
	By string
}

// RateLister is implemented by providers that can list the rate-limit
// state they hold. Only keys with live state are listed: a key whose
// state expired is back at full capacity. The stored state does not say
// what the limit is (the application passes it with every request), so a
// listing reports when each key is full again, not how many units remain;
// RateLimiter.RateLimit with N 0 and the application's limits reports
// Remaining for one key.
type RateLister interface {
	ListRates(ctx context.Context) ([]batontype.RateInfo, error)
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
	// run.Retention, amortised (see batontype.Retention).
	AcquireRun(ctx context.Context, p AcquireParams, run RunStart) (batontype.Lease, error)

	// ReleaseRun is Provider.Release and also records the end of run
	// (identified by run.Job and run.Token): Finished (see
	// RunEnd.Elapsed), Outcome and Error. The end is recorded even when the release
	// returns batontype.ErrNotHeld, so a run whose lease was lost still gets its
	// outcome.
	ReleaseRun(ctx context.Context, p ReleaseParams, run RunEnd) error

	// Runs returns the recorded runs of q.Job that started in [q.Since,
	// q.Until), newest first, at most q.Limit of them.
	Runs(ctx context.Context, q batontype.RunQuery) ([]batontype.RunRecord, error)

	// LastRuns returns the newest run of job and its newest successful
	// run that the ledger still holds (see batontype.Retention), each with Token 0
	// when there is none.
	LastRuns(ctx context.Context, job string) (last, lastSuccess batontype.RunRecord, err error)
}

// RunStart describes the run that AcquireRun opens.
type RunStart struct {
	CatchUp   bool // the run catches up a tick no replica ran
	Manual    bool // the run was asked for by an operator, not by the schedule
	Retention batontype.Retention
}

// Validate checks r.
func (r RunStart) Validate() error { return r.Retention.Validate() }

// RunEnd describes how a run ended, for ReleaseRun. Job, Token, Tick,
// LockedBy, Started and the flags repeat what AcquireRun recorded, so
// that a provider can store the whole record with the end.
type RunEnd struct {
	Run     batontype.RunRecord // Job, Token, Tick, LockedBy, Started, CatchUp, Manual
	Outcome batontype.Outcome   // one of the valid outcomes
	Error   string              // the error text; stored cut to batontype.MaxRunError bytes
	// Stack is the stack of a run that panicked; stored cut to
	// batontype.MaxRunStack bytes. Empty for any other outcome.
	Stack string
	// Elapsed is how long the run took, measured by the caller on its
	// monotonic clock from the claim's answer to the release. When set,
	// the run is recorded as finished at its start plus Elapsed, on every
	// provider: the duration is then the caller's measure whatever the
	// backend's clock does, and the Redis release needs no clock read.
	// Zero records the backend's clock at the release.
	Elapsed   time.Duration
	Retention batontype.Retention
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
	if err := batontype.ValidateName(e.Run.Job); err != nil {
		return err
	}
	if e.Run.Token == 0 {
		return batontype.Invalid("Token", "0", "must be the run's fencing token", batontype.ErrInvalid)
	}
	if e.Elapsed < 0 || e.Elapsed > 10*batontype.MaxDuration {
		return batontype.Invalid("Elapsed", e.Elapsed.String(), "must be between 0 and "+(10*batontype.MaxDuration).String(), batontype.ErrInvalidDuration)
	}
	if !e.Outcome.Valid() {
		return batontype.Invalid("Outcome", string(e.Outcome), "is not a run outcome", batontype.ErrInvalid)
	}
	if err := validateLockedBy(e.Run.LockedBy); err != nil {
		return err
	}
	return e.Retention.Validate()
}

// Departures is implemented by registries that remember the instances
// that are no longer live for batontype.DepartedRetention after they
// departed, so that operators see a replica that died ("gone") apart from
// one that shut down ("left"). An instance registered again under the
// same LockedBy is live again and no longer departed.
type Departures interface {
	// Departed returns the departed entries, sorted by LockedBy.
	Departed(ctx context.Context) ([]batontype.Departed, error)
}

// Registry is implemented by providers that keep the job registry: each
// scheduler instance publishes its jobs and a heartbeat, and tools outside
// the process read which jobs exist and which instances are alive.
type Registry interface {
	// Register publishes inst (its jobs included) for ttl: the entry
	// disappears unless Register or Heartbeat renews it within ttl. The
	// backend sets Heartbeat and Until.
	Register(ctx context.Context, inst batontype.Instance, ttl time.Duration) error

	// Heartbeat renews the entry of the instance named lockedBy for ttl
	// without resending its jobs. It returns batontype.ErrNotRegistered when the
	// entry is gone (it expired, or was never made): register again.
	Heartbeat(ctx context.Context, lockedBy string, ttl time.Duration) error

	// Deregister removes the entry of lockedBy at once. Removing an
	// entry that does not exist is not an error.
	Deregister(ctx context.Context, lockedBy string) error

	// Instances returns the live entries, sorted by LockedBy.
	Instances(ctx context.Context) ([]batontype.Instance, error)
}
