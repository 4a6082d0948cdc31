package scheduler

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/internal/schedule"
)

// DefaultRegistryTTL is the lifetime of a registry entry when
// Config.RegistryTTL is zero; the scheduler renews it every third of that.
const DefaultRegistryTTL = 30 * time.Second

// validateOps checks the operations fields of c and fills their defaults.
func (c *Config) validateOps() error {
	if err := c.LedgerRetention.Validate(); err != nil {
		return invalid("", "LedgerRetention", "", err.Error(), ErrInvalid, err)
	}
	switch {
	case c.RegistryTTL == 0:
		c.RegistryTTL = DefaultRegistryTTL
	case c.RegistryTTL < batontype.MinRegistryTTL || c.RegistryTTL > batontype.MaxDuration:
		return invalid("", "RegistryTTL", c.RegistryTTL.String(), "must be between "+batontype.MinRegistryTTL.String()+" and "+batontype.MaxDuration.String(), ErrInvalidDuration, nil)
	}
	if err := batontype.ValidateLockedBy(c.Version + "x"); err != nil {
		return invalid("", "Version", c.Version, "is not printable text of at most 254 bytes", ErrInvalid, err)
	}
	return nil
}

// ledger returns the provider's Ledger when Config.Ledger asks for it.
func (s *Scheduler) ledger() lockprovider.Ledger {
	if !s.cfg.Ledger {
		return nil
	}
	l, _ := s.provider.(lockprovider.Ledger)
	return l
}

// acquire asks for a job's lease for a tick, through the ledger when it is
// on, so the claim opens the run's record in the same round trip.
func (s *Scheduler) acquire(ctx context.Context, p lockprovider.AcquireParams, res *runResult) (batontype.Lease, error) {
	if l := s.ledger(); l != nil {
		return l.AcquireRun(ctx, p, lockprovider.RunStart{CatchUp: res.catchUp, Manual: res.manual, Retention: s.cfg.LedgerRetention})
	}
	return s.provider.Acquire(ctx, p)
}

// runResult is how a run ended, for the ledger.
type runResult struct {
	ctx     context.Context // of the tick's events; see Scheduler.claim
	lease   batontype.Lease
	held    time.Time // when the grant arrived (monotonic), for RunEnd.Elapsed
	catchUp bool
	err     error // the job's error, a *PanicError, or nil
	lost    bool  // the lease was lost while it ran
	lostErr error // and why (the lease's error)

	control // manual runs, attempts; see options.go
}

// outcome classifies a finished run.
func (s *Scheduler) outcome(r runResult) (batontype.Outcome, string) {
	var pe *PanicError
	switch {
	case r.lost:
		// The loss is the cause, whatever the job made of its ended
		// context ("context canceled"); what it returned follows.
		msg := ErrLockLost.Error()
		if r.lostErr != nil {
			msg = r.lostErr.Error()
		}
		if r.err != nil && !errors.Is(r.err, ErrLockLost) {
			msg += "; the job returned: " + r.err.Error()
		}
		return batontype.OutcomeLockLost, msg
	case errors.As(r.err, &pe):
		return batontype.OutcomePanicked, r.err.Error()
	case r.err != nil && errors.Is(context.Cause(s.runCtx), ErrClosed):
		return batontype.OutcomeShutDown, r.err.Error()
	case r.err != nil:
		return batontype.OutcomeFailed, r.err.Error()
	}
	return batontype.OutcomeSucceeded, r.note
}

// runEnd is how a run ended, for the ledger: from res and, for a loss,
// from the run's lease l. It is read when the lease is released.
func (s *Scheduler) runEnd(l *lease.Lease, res *runResult) lockprovider.RunEnd {
	r := *res
	r.lost = errors.Is(l.Err(), batontype.ErrLockLost)
	if r.lost {
		r.lostErr = l.Err()
	}
	out, msg := s.outcome(r)
	var stack string
	if pe := (*PanicError)(nil); out == batontype.OutcomePanicked && errors.As(r.err, &pe) {
		stack = string(pe.Stack) // the provider cuts it to batontype.MaxRunStack
	}
	return lockprovider.RunEnd{
		Run: batontype.RunRecord{
			Job: r.lease.Name, Token: r.lease.Token, Tick: r.lease.Tick, LockedBy: s.cfg.LockedBy,
			Started: r.lease.GrantedAt, CatchUp: r.catchUp, Manual: r.manual,
		},
		Outcome: out, Error: msg, Stack: stack, Elapsed: time.Since(r.held), Retention: s.cfg.LedgerRetention,
	}
}

// spec describes j for the registry.
func (s *Scheduler) spec(j *Job) batontype.JobSpec {
	js := batontype.JobSpec{Name: j.name, Schedule: schedule.Registered(j.sched), Locked: j.locked}
	if schedule.IsCron(j.sched) {
		js.TimeZone = s.cfg.Location.String()
	}
	if j.locked {
		js.AtMostFor, js.AtLeastFor = j.opts.atMostFor, j.opts.atLeastFor
		if j.opts.autoRenew {
			js.Options = append(js.Options, "auto_renew")
		}
		if j.opts.catchUp {
			js.Options = append(js.Options, "catch_up")
		}
	}
	js.Options = append(js.Options, j.ctl.options()...)
	if r := j.lastUnlocked.Load(); r != nil && !j.locked {
		c := *r
		js.LastRun = &c
	}
	j.skipMu.Lock()
	if j.skipped.Total() > 0 {
		sk := j.skipped
		js.Skips = &sk
	}
	j.skipMu.Unlock()
	if j.ctl.paused.Load() {
		// Job.Pause on this instance: jobstate reads it back, so a pause
		// on every replica is shown as a pause, not as missed ticks.
		js.Options = append(js.Options, "paused")
	}
	return js
}

// registrar publishes the scheduler's jobs to the provider's registry and
// renews the entry every RegistryTTL/3 while the scheduler runs.
type registrar struct {
	mu      sync.Mutex
	reg     lockprovider.Registry
	changed chan struct{} // buffered 1: the job set changed
	// runs is set when an unlocked job ran or a job skipped a tick: its
	// last run and skip counts are published with the next beat, a
	// Register instead of a Heartbeat, so a busy job costs one Register
	// per RegistryTTL/3, not one per tick.
	runs    atomic.Bool
	stop    chan struct{}
	done    chan struct{}
	started time.Time
}

// startRegistry starts publishing, if the provider keeps a registry and
// the config does not turn it off. s.mu is held.
func (s *Scheduler) startRegistry() {
	reg, ok := s.provider.(lockprovider.Registry)
	if !ok || s.cfg.DisableRegistry {
		return
	}
	r := &s.registry
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reg, r.started = reg, s.now()
	r.changed, r.stop, r.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	r.changed <- struct{}{}
	go s.publish(reg, r.started, r.changed, r.stop, r.done)
}

// jobsChanged asks for the job set to be published again.
func (s *Scheduler) jobsChanged() {
	r := &s.registry
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		return
	}
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// stopRegistry stops publishing and removes the entry (best effort).
func (s *Scheduler) stopRegistry() {
	r := &s.registry
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.stop = nil
	r.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CallTimeout)
	defer cancel()
	if err := r.reg.Deregister(ctx, s.cfg.LockedBy); err != nil {
		s.cfg.Logger.Warn("scheduler: could not remove the registry entry; it expires by itself", "err", err)
	}
}

func (s *Scheduler) publish(reg lockprovider.Registry, started time.Time, changed, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ttl := s.cfg.RegistryTTL
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	dirty := false
	for {
		select {
		case <-stop:
			return
		case <-changed:
			dirty = true
		case <-t.C:
			if s.registry.runs.Swap(false) {
				dirty = true
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CallTimeout)
		var err error
		if !dirty {
			err = reg.Heartbeat(ctx, s.cfg.LockedBy, ttl)
			dirty = errors.Is(err, batontype.ErrNotRegistered)
		}
		if dirty {
			err = reg.Register(ctx, s.instance(started), ttl)
			dirty = err != nil
		}
		cancel()
		if err != nil {
			s.cfg.Logger.Warn("scheduler: registry update failed; retrying", "err", err)
		}
	}
}

// skipped counts a tick of j this instance did not run, for reason (a
// batontype Skip reason), to be published with the registry's next beat.
// holder is the lease's LockedBy when known.
func (s *Scheduler) skipped(j *Job, tick time.Time, reason, holder string) {
	j.skips.Add(1)
	if batontype.ValidateLockedBy(holder) != nil {
		holder = "" // not a name the registry takes (another locker's lease)
	}
	j.skipMu.Lock()
	j.skipped.Add(batontype.Skip{Tick: tick, Reason: reason, Holder: holder})
	j.skipMu.Unlock()
	s.registry.runs.Store(true)
}

// instance describes this scheduler for the registry.
func (s *Scheduler) instance(started time.Time) batontype.Instance {
	s.mu.Lock()
	jobs := make([]batontype.JobSpec, 0, len(s.jobs))
	for _, j := range s.jobs {
		jobs = append(jobs, s.spec(j))
	}
	s.mu.Unlock()
	slices.SortFunc(jobs, func(a, b batontype.JobSpec) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return batontype.Instance{LockedBy: s.cfg.LockedBy, Version: s.cfg.Version, Started: started, Jobs: jobs}
}
