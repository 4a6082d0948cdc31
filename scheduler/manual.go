package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Manual runs: RunNow and the provider's run requests, and the
// hand-off of a tick that came while a manual run held the lock.

// track counts a goroutine that Shutdown and Close wait for, unless the
// scheduler is closed.
func (s *Scheduler) track() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return ErrClosed
	}
	s.wg.Add(1)
	return nil
}

// RunNow runs the job named name now, on this instance, as a manual run:
// exactly one run, whichever replica RunNow is called on. A locked job's
// manual run holds the job's lock (same name, same fencing-token sequence)
// but claims no tick, so it never takes the place of a scheduled tick:
// the provider's last tick is untouched, the lease has no AtLeastFor, and
// a tick that comes while the manual run holds the lock is run right after
// it, by this instance (see docs/semantics.md). When another run of the
// job holds the lock, or runs on this instance, RunNow waits for it to
// end, until ctx is done; a scheduled run that returned before its
// AtLeastFor bound holds the lock until that bound. It returns once the
// run has started (its outcome goes to the hooks and the ledger), a
// *ValidationError matching ErrUnknownJob for a name not registered here,
// ErrClosed once Shutdown or Close began, ctx's error, or the provider's
// error. Manual runs are not affected by Pause. RunNow works before Start too. For a job that
// only other instances register, store a run request instead
// (lockprovider.Control.RequestRun, or baton jobs run).
func (s *Scheduler) RunNow(ctx context.Context, name string) error {
	if ctx == nil {
		return ErrNilContext
	}
	j, err := s.lookup(name, "RunNow")
	if err != nil {
		return err
	}
	if err := s.track(); err != nil {
		return err
	}
	started := make(chan error, 1)
	go s.runManual(ctx, j, func(err error) { started <- err })
	return <-started
}

// handoffMargin bounds how long before a manual run's grant a scheduled
// tick may have fired and still had its claims refused by the manual
// lease (claims in flight); the call timeout bounds it too.
const handoffMargin = time.Second

// runManual runs j once as a manual run, telling started whether it
// started. The caller did s.track.
func (s *Scheduler) runManual(ctx context.Context, j *Job, started func(error)) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Manual: true}
	res := &runResult{control: control{manual: true}}
	l, err := s.manualClaim(ctx, j, &ev, res)
	started(err)
	if err != nil {
		if j.locked {
			ev.Err, ev.Outcome = err, observe.OutcomeError
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
				ev.Outcome = observe.OutcomeCanceled
			}
			s.emit(res.ctx, observe.JobDone, &ev)
		}
		return
	}
	if l == nil {
		ctx, cancel := context.WithCancelCause(s.runCtx)
		s.attempts(ctx, j, Run{Job: j.name, Manual: true}, ev, res)
		cancel(nil)
		j.running.Store(false)
		return
	}
	s.attempts(l.Context(), j, Run{Job: j.name, Token: ev.Token, Manual: true, lease: l}, ev, res)
	held := s.end(j, l, ev, res)
	j.running.Store(false)
	if s.obs != nil {
		ev.Err, ev.Outcome = res.err, s.runOutcome(res.err, l, held)
		s.emit(res.ctx, observe.JobDone, &ev)
	}
	// A tick whose claim came while the manual run held the lock was
	// refused on every replica (here as ErrStillRunning): run it now. Its
	// claim carries the tick, so it runs at most once (a tick that did run
	// elsewhere is refused quietly). A jittered tick is claimed at its
	// delay: one whose claim is still ahead makes it itself, so the tick
	// before it is the one that may have been refused.
	now := s.now()
	tick := j.sched.Prev(now)
	claimedAt := func(t time.Time) time.Time { return t.Add(JitterOf(j.name, t, j.ctl.jitter)) }
	if !tick.IsZero() && claimedAt(tick).After(now) {
		tick = j.sched.Prev(tick.Add(-time.Nanosecond))
	}
	if tick.IsZero() || claimedAt(tick).Before(res.granted.Add(-min(handoffMargin, s.cfg.CallTimeout))) {
		return
	}
	if s.track() != nil {
		return
	}
	s.executeHandoff(j, tick)
}

// executeHandoff is execute for the tick that a manual run held the lock
// through. The caller did s.track.
func (s *Scheduler) executeHandoff(j *Job, tick time.Time) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Tick: tick}
	if !s.admit(j, &ev) || !j.running.CompareAndSwap(false, true) {
		return
	}
	defer j.running.Store(false)
	res := &runResult{control: control{handoff: true}}
	l := s.claim(j, tick, &ev, res, nil)
	if l == nil {
		s.emit(res.ctx, observe.JobDone, &ev)
		return
	}
	s.attempts(l.Context(), j, Run{Job: j.name, Tick: tick, Token: ev.Token, lease: l}, ev, res)
	held := s.end(j, l, ev, res)
	if s.obs != nil {
		ev.Err, ev.Outcome = res.err, s.runOutcome(res.err, l, held)
		s.emit(res.ctx, observe.JobDone, &ev)
	}
}

// manualClaim waits until this instance runs no run of j and, for a
// locked job, acquires j's lease without a tick. On success j.running is
// set and, for a locked job, the lease is returned (nil for an unlocked
// job). It polls with a backoff of 50ms doubling to 1s while another run
// holds the lock, and gives up when ctx is done or Shutdown begins.
func (s *Scheduler) manualClaim(ctx context.Context, j *Job, ev *Event, res *runResult) (*lease.Lease, error) {
	res.ctx = s.runCtx
	if j.locked {
		ev.Name = j.name
		res.ctx = s.emit(s.runCtx, observe.JobAttempt, ev)
	}
	backoff := 50 * time.Millisecond
	for {
		if j.running.CompareAndSwap(false, true) {
			if !j.locked {
				return nil, nil
			}
			l, err := s.manualAcquire(ctx, j, ev, res)
			if l != nil || err != nil {
				if err != nil {
					j.running.Store(false)
				}
				return l, err
			}
			j.running.Store(false)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-s.stop:
			t.Stop()
			return nil, ErrClosed
		}
		backoff = min(2*backoff, time.Second)
	}
}

// manualAcquire tries once to acquire j's lease for a manual run: the
// lease, or nil and no error when another run holds it.
func (s *Scheduler) manualAcquire(ctx context.Context, j *Job, ev *Event, res *runResult) (*lease.Lease, error) {
	owner := lockprovider.NewOwner()
	sent := s.now()
	res.granted = sent
	actx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	grant, err := s.acquire(actx, lockprovider.AcquireParams{
		Name: j.name, Owner: owner, LockedBy: s.cfg.LockedBy, AtMostFor: j.opts.atMostFor,
	}, res)
	cancel()
	switch {
	case err == nil:
		claimed := *ev
		claimed.Start, claimed.Duration = sent, s.now().Sub(sent)
		claimed.Token, claimed.Outcome = grant.Token, observe.OutcomeClaimed
		s.emit(res.ctx, observe.JobClaimed, &claimed)
		return s.hold(j, owner, &grant, sent, ev, res), nil
	case errors.Is(err, batontype.ErrNotAcquired):
		return nil, nil
	}
	if !batontype.Definite(err) {
		if rerr := lease.Abandon(s.runCtx, s.provider, j.name, owner, s.cfg.CallTimeout); rerr != nil {
			s.cfg.Logger.WarnContext(s.runCtx, "scheduler: release after a failed manual acquire; the lease lapses at its expiry", "job", j.name, "err", rerr)
		}
	}
	return nil, fmt.Errorf("scheduler: manual run of %q: acquire: %w", j.name, err)
}
