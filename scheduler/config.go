package scheduler

import (
	"log/slog"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Config configures a Scheduler. The zero value (or a nil *Config) gives
// the documented defaults.
type Config struct {
	// Logger receives the scheduler's logs: skips at debug, lost locks and
	// unknown-outcome acquires at warn, job failures at error. Nil
	// discards them.
	Logger *slog.Logger

	// Location is the time zone of cron specs without a CRON_TZ= or TZ=
	// prefix. Nil means UTC, not time.Local: replicas must compute the
	// same ticks, and hosts may disagree about their local zone.
	Location *time.Location

	// AtMostFor is the lease length of locked jobs registered
	// without the AtMostFor lock option, as baton.Config.AtMostFor is the
	// Locker's. Zero means there is no default: such a
	// registration fails with ErrInvalidDuration.
	AtMostFor time.Duration

	// AtLeastFor is the minimum hold of locked jobs registered
	// without the AtLeastFor lock option. Zero means none.
	AtLeastFor time.Duration

	// LockedBy names this instance in the provider for operators. Empty
	// means "hostname/pid", as for baton.Locker.
	LockedBy string

	// CallTimeout bounds each provider call (acquire, extend, release,
	// inspect). Zero means 5s.
	CallTimeout time.Duration

	// InspectOnSkip, when set and the provider implements
	// lockprovider.Inspector, reads the holder of a lock this instance did
	// not get, to fill Event.LockedBy and Event.Until of the Skipped hook
	// and the holder of the latest skip the registry publishes
	// (batontype.Skips). It costs one more round trip per skipped tick;
	// off by default.
	InspectOnSkip bool

	// Observer receives the scheduler's events (package observe: claims,
	// skips, runs and their outcomes, lost locks, catch-ups) and those of
	// its runs' leases (extensions, losses, releases). Nil means none.
	// Hooks is an Observer with one function per outcome:
	// Observer: scheduler.Hooks{Failed: ...}; observe.Join combines it
	// with others.
	Observer observe.Observer

	// Ledger records every tick this instance claims in the provider's
	// run ledger, when the provider implements lockprovider.Ledger:
	// replica, token, start, end, outcome and error, written by the claim
	// and the release themselves (no extra round trip). Off by default.
	Ledger bool

	// LedgerRetention bounds the ledger per job. The zero value means
	// batontype.DefaultMaxRuns runs and batontype.DefaultMaxRunAge.
	LedgerRetention batontype.Retention

	// DisableRegistry stops the scheduler from publishing its jobs and a
	// heartbeat to the provider's job registry. By default a scheduler
	// whose provider implements lockprovider.Registry publishes them from
	// Start to Shutdown, under LockedBy, which must then be unique per
	// instance.
	DisableRegistry bool

	// RegistryTTL is how long the registry entry outlives its last
	// renewal; it is renewed every RegistryTTL/3. Zero means
	// DefaultRegistryTTL (30s).
	RegistryTTL time.Duration

	// Version is published in the registry, e.g. the application's build.
	// Empty means none is published.
	Version string

	// ControlPoll is how often the scheduler reads the provider's control
	// state (cluster-wide pauses, run-now requests; see
	// lockprovider.Control) besides the reads that change announcements
	// trigger. It bounds how stale a pause can be when announcements are
	// lost. Zero means DefaultControlPoll (5s).
	ControlPoll time.Duration

	// DisableControl stops the scheduler from following the provider's
	// control state: cluster-wide pauses and run-now requests made
	// elsewhere are then ignored by this instance. By default a scheduler
	// whose provider implements lockprovider.Control follows it.
	DisableControl bool

	// Now replaces time.Now, for tests that simulate a skewed clock. The
	// returned times must carry a monotonic reading (derive them from
	// time.Now). Nil means time.Now. Leases are still timed by the
	// provider's clock.
	Now func() time.Time
}

// Hooks is an observe.Observer in simpler form, for Config.Observer: each
// hook is called for one or two kinds of the scheduler's events (named
// below), with the event itself; other events are ignored. Every hook is
// optional. Hooks are called synchronously on the job's goroutine: keep
// them short and non-blocking. A panic in a hook is recovered and logged
// to Logger.
type Hooks struct {
	// Attempt (observe.JobAttempt): a locked job is about to try to
	// acquire its lock for a tick, or for a manual run (Event.Manual).
	Attempt func(Event)
	// Skipped (observe.JobSkipped): this instance does not run the tick. Event.Err says why;
	// test it with errors.Is: ErrNotAcquired (held elsewhere),
	// ErrStaleTick (the tick already ran), ErrStillRunning (the previous
	// run on this instance has not returned) or ErrPaused (the job is
	// paused here or cluster-wide).
	Skipped func(Event)
	// Started (observe.JobStarted): the job function is about to be
	// called.
	Started func(Event)
	// Succeeded (observe.JobFinished without Err): the job function
	// returned nil.
	Succeeded func(Event)
	// Failed (observe.JobFinished with Err, observe.JobClaimFailed,
	// observe.JobCatchUp with Err): the job function returned an error or
	// panicked (a *PanicError), or the acquire failed with an unknown
	// outcome (the job did not run; Event.Err wraps the provider's error),
	// or a catch-up could not read the last tick.
	Failed func(Event)
	// LockLost (observe.JobLockLost): the job's lease ended while it ran (or the acquire's reply
	// came after the trust window, and the job did not start); its context
	// was cancelled with cause ErrLockLost, which Event.Err matches. A loss
	// the run did not learn of before it returned (a force-release) is
	// reported when its release finds the lease gone; Event.Err matches
	// ErrLockLost then too.
	LockLost func(Event)
	// Logger receives a hook's recovered panic, at error level. Nil
	// means it is not logged.
	Logger *slog.Logger
}

// Event describes one tick of one job for the hooks: the observer's
// event. The hooks read Job, Tick, Token (once acquired), CatchUp, Manual
// (a manual run, whose Tick is zero), Attempt (Started, Succeeded, Failed:
// which call of the job function, see Builder.Retry), Duration (Succeeded, Failed: how long the job function ran), Err
// (Skipped: the reason; Failed, LockLost: the error), and LockedBy and
// Until (Skipped: the holder and its lease end on the provider's clock,
// when known; see Config.InspectOnSkip).
type Event = observe.Event

const defaultCallTimeout = 5 * time.Second

// withDefaults returns a validated copy of cfg with defaults filled in.
func (cfg *Config) withDefaults() (Config, error) {
	c := defaults.Of(cfg)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = defaultCallTimeout
	}
	if c.CallTimeout < 0 {
		return c, invalid("", "CallTimeout", c.CallTimeout.String(), "must not be negative", ErrInvalidDuration, nil)
	}
	if c.LockedBy == "" {
		c.LockedBy = lease.LockedBy()
	}
	// Validate LockedBy with the provider's rules via a probe of params.
	probe := lockprovider.AcquireParams{Name: "x", Owner: "x", LockedBy: c.LockedBy, AtMostFor: time.Second}
	if err := probe.Validate(); err != nil {
		return c, invalid("", "LockedBy", c.LockedBy, "is not acceptable to providers", ErrInvalid, err)
	}
	switch {
	case c.AtMostFor < 0:
		return c, invalid("", "AtMostFor", c.AtMostFor.String(), "must not be negative", ErrInvalidDuration, nil)
	case c.AtMostFor > 0:
		if err := batontype.ValidateDurations(c.AtMostFor, 0); err != nil {
			return c, invalid("", "AtMostFor", c.AtMostFor.String(), "is out of range", ErrInvalidDuration, err)
		}
	}
	switch {
	case c.AtLeastFor < 0:
		return c, invalid("", "AtLeastFor", c.AtLeastFor.String(), "must not be negative", ErrInvalidDuration, nil)
	case c.AtMostFor > 0 && c.AtLeastFor > c.AtMostFor:
		return c, invalid("", "AtLeastFor", c.AtLeastFor.String(),
			"must not exceed AtMostFor "+c.AtMostFor.String(), ErrInvalidDuration, nil)
	}
	if err := c.validateControl(); err != nil {
		return c, err
	}
	return c, c.validateOps()
}
