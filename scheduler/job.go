package scheduler

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/internal/schedule"
)

// Func is the work of a job. ctx is cancelled when the job's lease is lost
// (cause ErrLockLost) or the scheduler stops waiting for it (cause
// ErrClosed). A returned error is logged and reported to Hooks.Failed.
type Func func(ctx context.Context, run Run) error

// Run describes one execution of a job.
type Run struct {
	Job     string    // the job's name
	Tick    time.Time // the scheduled time this run is for
	Token   int64     // fencing token of the lease; 0 for jobs without Locked
	CatchUp bool      // this run catches up a tick that no replica ran
	Manual  bool      // a manual run (RunNow, or a run request); Tick is zero
	Attempt int       // 1, or 1 + the retries so far (see Builder.Retry)

	lease *lease.Lease // nil for jobs without Locked
}

// Extend prolongs the lease of a locked job to end d from now (provider
// clock) and restarts the job context's trust window at this call.
// If the lease is gone it cancels the job's context with ErrLockLost and
// returns an error matching ErrLockLost and batontype.ErrNotHeld. It
// returns ErrNotLocked for a job registered without Locked. The minimum
// hold (AtLeastFor) keeps counting from the original grant, capped at
// the new lease end.
func (r Run) Extend(ctx context.Context, d time.Duration) error {
	if r.lease == nil {
		return ErrNotLocked
	}
	err := r.lease.Extend(ctx, d)
	if errors.Is(err, batontype.ErrInvalidDuration) {
		return invalid(r.Job, "Extend", d.String(), "is not a valid lease length", ErrInvalidDuration, err)
	}
	return err
}

// Check reports whether the run's lease can still be trusted, comparing
// its trust window with the monotonic clock now rather than waiting for the
// window's timer, which a paused or overloaded process runs late. It
// returns nil while the window is open; once it has passed, Check cancels
// the job's context and returns an error matching ErrLockLost; after the
// run ended, an error saying so. It returns ErrNotLocked for a job
// registered without Locked. The fenced writes of package fence given the
// job's context call it before writing.
func (r Run) Check() error {
	if r.lease == nil {
		return ErrNotLocked
	}
	return r.lease.Check()
}

// EveryOption adjusts an Every schedule.
type EveryOption func(*schedule.Every) error

// Offset shifts the ticks of Every(d) to epoch + offset + k*d, with
// 0 <= offset < d: Every(24*time.Hour, Offset(2*time.Hour)) runs at 02:00
// UTC.
func Offset(offset time.Duration) EveryOption {
	return func(e *schedule.Every) error {
		if offset < 0 || offset >= e.Period {
			return invalid("", "Offset", offset.String(), "must be in [0, "+e.Period.String()+")", ErrInvalidDuration, nil)
		}
		e.Offset = offset
		return nil
	}
}

// LockOption adjusts the lock of a locked job.
type LockOption func(*lockOpts) error

type lockOpts struct {
	atMostFor, atLeastFor       time.Duration
	hasAtMostFor, hasAtLeastFor bool
	autoRenew, catchUp          bool
}

// AtMostFor sets the lease length: a crashed holder blocks the job for
// at most d, and a run still going at d has its context cancelled with
// ErrLockLost (unless AutoRenew). d must be at least 1ms.
func AtMostFor(d time.Duration) LockOption {
	return func(o *lockOpts) error {
		if d <= 0 {
			return invalid("", "AtMostFor", d.String(), "must be positive", ErrInvalidDuration, nil)
		}
		o.atMostFor, o.hasAtMostFor = d, true
		return nil
	}
}

// AtLeastFor keeps the lock held until d after it was granted even when
// the run finishes sooner, so replicas whose clocks lag do not find it
// free. d must not be negative nor exceed the AtMostFor.
func AtLeastFor(d time.Duration) LockOption {
	return func(o *lockOpts) error {
		if d < 0 {
			return invalid("", "AtLeastFor", d.String(), "must not be negative", ErrInvalidDuration, nil)
		}
		o.atLeastFor, o.hasAtLeastFor = d, true
		return nil
	}
}

// LockBounds is a lock's bounds read from elsewhere, such as a ShedLock
// @SchedulerLock annotation parsed by package lockprovider/shedlock: the
// scheduler consumes it, so the source needs no scheduler import. A bound
// the source does not give (ok false) keeps the scheduler's default.
type LockBounds interface {
	LockBounds() (atMostFor time.Duration, atMostOK bool, atLeastFor time.Duration, atLeastOK bool)
}

// Bounds applies what b gives as AtMostFor and AtLeastFor would, with
// the same checks.
func Bounds(b LockBounds) LockOption {
	return func(o *lockOpts) error {
		if b == nil {
			return invalid("", "Bounds", "nil", "must not be nil", ErrInvalid, nil)
		}
		atMost, atMostOK, atLeast, atLeastOK := b.LockBounds()
		if atMostOK {
			if err := AtMostFor(atMost)(o); err != nil {
				return err
			}
		}
		if atLeastOK {
			return AtLeastFor(atLeast)(o)
		}
		return nil
	}
}

// AutoRenew extends the lease every AtMostFor/3 while the job runs, so
// a run may outlast AtMostFor. If an extension finds the lease gone,
// the job's context is cancelled with ErrLockLost.
func AutoRenew() LockOption {
	return func(o *lockOpts) error { o.autoRenew = true; return nil }
}

// CatchUp runs the job once at Start when its latest tick before Start ran
// on no replica (per the provider's record of the last granted tick). The
// run carries that missed tick. The provider must implement
// lockprovider.Inspector.
func CatchUp() LockOption {
	return func(o *lockOpts) error { o.catchUp = true; return nil }
}

// Builder collects a job's schedule and options. Obtain one from
// Scheduler.Every or Scheduler.Cron and finish it with Do. Errors are
// reported by Do.
type Builder struct {
	s       *Scheduler
	sched   schedule.Schedule
	err     error
	name    string
	named   bool
	locked  bool
	lockOps []LockOption
	ctl     jobOptions // Retry, Jitter, Timeout; see options.go
}

// Every schedules a job at every multiple of d since the Unix epoch (plus
// an optional Offset), the same instants on every replica. d must be at
// least 1ms.
func (s *Scheduler) Every(d time.Duration, opts ...EveryOption) *Builder {
	b := &Builder{s: s}
	if d < schedule.MinPeriod {
		b.err = invalid("", "Every", d.String(), "must be at least "+schedule.MinPeriod.String(), ErrInvalidDuration, nil)
		return b
	}
	e := schedule.Every{Period: d}
	for _, o := range opts {
		if o == nil {
			b.err = invalid("", "EveryOption", "", "is nil", ErrInvalidOption, nil)
			return b
		}
		if err := o(&e); err != nil {
			b.err = err
			return b
		}
	}
	b.sched = e
	return b
}

// Cron schedules a job by a cron spec: 5 fields (minute hour day-of-month
// month day-of-week), or 6 with seconds first; the descriptors @yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly; and
// "@every <duration>", which ticks like Every (aligned to the epoch). A
// "CRON_TZ=<zone> " or "TZ=<zone> " prefix sets the zone; otherwise
// Config.Location applies. An invalid spec yields a *SpecError from Do.
func (s *Scheduler) Cron(spec string) *Builder {
	b := &Builder{s: s}
	b.sched, b.err = schedule.ParseCron(spec, s.cfg.Location)
	return b
}

// Name names a job registered without Locked, for logs and hooks. Unnamed
// unlocked jobs are called "job-<n>".
func (b *Builder) Name(name string) *Builder {
	if b.named && b.name != name && b.err == nil {
		b.err = invalid(name, "Name", name, "conflicts with name "+strconv.Quote(b.name), ErrInvalidName, nil)
	}
	b.name, b.named = name, true
	return b
}

// Locked makes the job run on one replica per tick: each replica tries to
// acquire the lock name for the tick and only the winner runs it.
func (b *Builder) Locked(name string, opts ...LockOption) *Builder {
	b.Name(name)
	b.locked = true
	b.lockOps = append(b.lockOps, opts...)
	return b
}

// Do registers fn and returns the job, or an error for invalid input: a
// *SpecError, or a *ValidationError matching ErrInvalidName,
// ErrDuplicateName, ErrNilJob, ErrInvalidDuration, ErrInvalidOption or
// ErrCatchUpNotSupported; ErrClosed after Shutdown or Close. A job may be
// registered before or after Start.
func (b *Builder) Do(fn Func) (*Job, error) {
	if b.err != nil {
		return nil, b.err
	}
	if fn == nil {
		return nil, invalid(b.name, "Do", "", "job func is nil", ErrNilJob, nil)
	}
	j := &Job{s: b.s, sched: b.sched, fn: fn, name: b.name, locked: b.locked}
	if b.named {
		if err := batontype.ValidateName(b.name); err != nil {
			return nil, withJob(b.name, err)
		}
	}
	if b.locked {
		o := lockOpts{atMostFor: b.s.cfg.AtMostFor, atLeastFor: b.s.cfg.AtLeastFor}
		for _, opt := range b.lockOps {
			if opt == nil {
				return nil, invalid(b.name, "LockOption", "", "is nil", ErrInvalidOption, nil)
			}
			if err := opt(&o); err != nil {
				return nil, withJob(b.name, err)
			}
		}
		if o.atMostFor == 0 {
			return nil, invalid(b.name, "AtMostFor", "", "is not set and Config.AtMostFor is zero", ErrInvalidDuration, nil)
		}
		if err := batontype.ValidateDurations(o.atMostFor, o.atLeastFor); err != nil {
			return nil, withJob(b.name, err)
		}
		if o.catchUp {
			if _, ok := b.s.provider.(lockprovider.Inspector); !ok {
				return nil, invalid(b.name, "CatchUp", "", "the provider does not implement lockprovider.Inspector", ErrCatchUpNotSupported, nil)
			}
		}
		j.opts = o
	}
	if err := b.ctl.check(b, j); err != nil {
		return nil, err
	}
	if err := b.s.add(j, b.named); err != nil {
		return nil, err
	}
	return j, nil
}

// Job is a registered job.
type Job struct {
	s      *Scheduler
	sched  schedule.Schedule
	fn     Func
	name   string
	locked bool
	opts   lockOpts

	// Guarded by Scheduler.mu.
	nextTick time.Time
	index    int // position in the scheduler's heap, -1 when not queued

	running atomic.Bool // a run of this job is in progress on this instance
	// releasing is set while a run that has returned releases its lease,
	// with releaseMu held: the next tick waits for the release instead of
	// skipping as still running (see Scheduler.startRun).
	releasing atomic.Bool
	releaseMu sync.Mutex
	ctl       jobControl // options and state; see options.go

	// lastUnlocked is an unlocked job's latest run, for the registry.
	lastUnlocked atomic.Pointer[batontype.RunRecord]
	// skipped counts the ticks this instance did not run, for the
	// registry (JobSpec.Skips).
	skipMu  sync.Mutex
	skipped batontype.Skips

	runs, skips, failures, lockLost atomic.Int64
}

// Name returns the job's name.
func (j *Job) Name() string { return j.name }

// Next returns the next tick the job is scheduled for, or the zero time if
// the scheduler is not running.
func (j *Job) Next() time.Time {
	j.s.mu.Lock()
	defer j.s.mu.Unlock()
	return j.nextTick
}

// Stats counts what happened to the job's ticks on this instance.
type Stats struct {
	Runs     int64 // the job function was called (each attempt of Builder.Retry counts)
	Skips    int64 // another replica had the lock or the tick, a run was still going, or the job was paused
	Failures int64 // calls that returned an error or panicked, and acquires with unknown outcome
	LockLost int64 // runs whose lease ended while they ran
}

// Stats returns the job's counters.
func (j *Job) Stats() Stats {
	return Stats{Runs: j.runs.Load(), Skips: j.skips.Load(), Failures: j.failures.Load(), LockLost: j.lockLost.Load()}
}
