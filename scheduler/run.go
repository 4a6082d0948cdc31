package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// errRunEnded is the cause of a run's context once the run has returned
// and its lease was released; Run.Extend and Run.Check return it then.
var errRunEnded = errors.New("scheduler: the run has ended and its lease was released")

// execute handles one tick of j on its own goroutine: claim, run, release.
// The caller has done s.wg.Add(1).
func (s *Scheduler) execute(j *Job, tick time.Time, catchUp bool) {
	s.executeClaimed(j, tick, catchUp, nil)
}

// executeClaimed is execute, for a claim already made in a batch when pre
// is not nil (see batch.go), which also marked j running.
func (s *Scheduler) executeClaimed(j *Job, tick time.Time, catchUp bool, pre *claimAnswer) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Tick: tick, CatchUp: catchUp}
	if pre == nil && !s.admit(j, &ev) { // pause.go: removed, jitter, paused (a batch checked them)
		return
	}
	if pre == nil && !s.startRun(j) {
		s.skipRunning(j, &ev)
		return
	}
	released := false
	defer func() {
		if !released {
			j.running.Store(false)
		}
	}()

	if pre != nil && pre.err != nil {
		s.refused(j, &ev, pre)
		return
	}
	res := &runResult{catchUp: catchUp}
	if !j.locked {
		s.runUnlocked(j, &ev, res)
		return
	}
	l := s.claim(j, tick, &ev, res, pre)
	if l == nil {
		s.emit(res.ctx, observe.JobDone, &ev)
		return
	}
	s.attempts(l.Context(), j, Run{Job: j.name, Tick: tick, Token: ev.Token, CatchUp: catchUp, lease: l}, ev, res)
	j.releaseMu.Lock()
	j.releasing.Store(true)
	held := s.end(j, l, ev, res)
	j.running.Store(false)
	j.releasing.Store(false)
	j.releaseMu.Unlock()
	released = true
	if s.obs != nil {
		ev.Err, ev.Outcome = res.err, s.runOutcome(res.err, l, held)
		s.emit(res.ctx, observe.JobDone, &ev)
	}
}

// The rarer paths of executeClaimed are functions of their own: every
// run's goroutine grows its stack to executeClaimed's frame, which holds
// the locals of all its paths.

// refused reports a batch claim's answer that granted nothing, as claim
// and executeClaimed report a single one's, with the runResult on the
// stack: a tick of many jobs brings the replicas that lose it a refusal
// for every job, and a run's allocations would be spent on each.
func (s *Scheduler) refused(j *Job, ev *Event, pre *claimAnswer) {
	ev.Name = j.name
	res := runResult{ctx: pre.ctx, catchUp: ev.CatchUp}
	s.notClaimed(j, ev.Tick, pre, ev, &res)
	s.emit(res.ctx, observe.JobDone, ev)
}

// startRun marks j running for a tick, and reports whether it could. When
// the previous run has returned and only its release is still on the
// wire, it waits for that release, which its own timeout bounds: skipping
// the tick as still running would lose it to bookkeeping, and claiming it
// before the release lands would find the lock still held.
func (s *Scheduler) startRun(j *Job) bool {
	if j.running.CompareAndSwap(false, true) {
		return true
	}
	if !j.releasing.Load() {
		return false
	}
	j.releaseMu.Lock() // held by the releasing run until it is done
	ok := j.running.CompareAndSwap(false, true)
	j.releaseMu.Unlock()
	return ok
}

// skipRunning reports a tick skipped because j's previous run is still
// going.
func (s *Scheduler) skipRunning(j *Job, ev *Event) {
	ev.Err, ev.Outcome = ErrStillRunning, observe.OutcomeStillRunning
	s.skipped(j, ev.Tick, batontype.SkipStillRunning, "")
	s.cfg.Logger.DebugContext(s.runCtx, "scheduler: skipped tick: previous run still running", "job", j.name, "tick", ev.Tick)
	s.emit(s.runCtx, observe.JobSkipped, ev)
}

// skipMissed reports the ticks of j that passed while this process could
// not fire them (see Scheduler.fire). The caller did s.wg.Add(1).
func (s *Scheduler) skipMissed(j *Job, missed *MissedError) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Tick: missed.First, Err: missed, Outcome: observe.OutcomeMissed}
	s.skipped(j, missed.Last, batontype.SkipMissed, "")
	s.cfg.Logger.WarnContext(s.runCtx, "scheduler: skipped ticks that passed while this process could not fire them (paused, suspended, or the wall clock stepped forward); running the latest",
		"job", j.name, "first", missed.First, "last", missed.Last)
	s.emit(s.runCtx, observe.JobSkipped, &ev)
}

// runUnlocked runs the tick of an unlocked job.
func (s *Scheduler) runUnlocked(j *Job, ev *Event, res *runResult) {
	ctx, cancel := context.WithCancelCause(s.runCtx)
	defer cancel(nil)
	start := s.now()
	s.attempts(ctx, j, Run{Job: j.name, Tick: ev.Tick, CatchUp: ev.CatchUp}, *ev, res)
	// The ledger records locked jobs only: an unlocked job's latest run
	// goes to the registry, at the publisher's next beat (see publish).
	out, msg := s.outcome(*res)
	j.lastUnlocked.Store(&batontype.RunRecord{Job: j.name, Tick: ev.Tick, LockedBy: s.cfg.LockedBy, Started: start,
		Finished: s.now(), Outcome: out, Error: batontype.CutError(msg), CatchUp: ev.CatchUp})
	s.registry.runs.Store(true)
}

// claim acquires j's lock for tick and returns the run's lease, or nil when
// this instance does not run the tick (the hooks and logs say why). After
// an acquire of unknown outcome, or one that Close interrupted, it releases
// whatever the acquire may have granted, so that the next tick does not
// find the name held until the lease expires. With the ledger on, the
// acquire opens the run's record and the lease's release completes it
// with res. It sets ev.Outcome when it returns nil, and res.ctx to the
// context of the tick's events (see observe.JobAttempt). A batch claim
// (pre) has emitted the attempt and made the acquire already.
func (s *Scheduler) claim(j *Job, tick time.Time, ev *Event, res *runResult, pre *claimAnswer) *lease.Lease {
	ev.Name = j.name
	if pre == nil {
		pre = s.acquireAlone(j, tick, ev, res)
	}
	res.ctx = pre.ctx
	if pre.err != nil {
		s.notClaimed(j, tick, pre, ev, res)
		return nil
	}
	if s.obs != nil {
		claimed := *ev // for the claim's own event, timed
		claimed.Start, claimed.Duration = pre.sent, pre.took
		claimed.Token, claimed.Outcome = pre.grant.Token, observe.OutcomeClaimed
		s.emit(res.ctx, observe.JobClaimed, &claimed)
	}
	return s.hold(j, pre.owner, &pre.grant, pre.sent, ev, res)
}

// acquireAlone claims j's tick with a single acquire. Apart from claim, like
// notClaimed, to keep claim's stack frame small: every run's goroutine
// grows its stack for it.
func (s *Scheduler) acquireAlone(j *Job, tick time.Time, ev *Event, res *runResult) *claimAnswer {
	a := &claimAnswer{ctx: s.emit(s.runCtx, observe.JobAttempt, ev), owner: lockprovider.NewOwner(), sent: s.now()}
	ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.CallTimeout)
	a.grant, a.err = s.acquire(ctx, s.params(j, a.owner, tick, res.atLeastFor(j)), res)
	cancel()
	a.took = s.now().Sub(a.sent)
	return a
}

// notClaimed reports a claim that did not grant (err is the acquire's)
// and sets ev.Outcome; after an error of unknown outcome it releases what
// the acquire may have granted. It is apart from claim so that claim's
// own stack frame, which every run's goroutine grows its stack for, stays
// small.
func (s *Scheduler) notClaimed(j *Job, tick time.Time, a *claimAnswer, ev *Event, res *runResult) {
	owner, err := a.owner, a.err
	claimed := *ev // for the claim's own event, timed
	claimed.Start, claimed.Duration = a.sent, a.took
	switch {
	case res.handoff && errors.Is(err, batontype.ErrStaleTick):
		ev.Outcome = observe.OutcomeSkipped // a tick this instance already reported (see runManual)
	case errors.Is(err, batontype.ErrNotAcquired), errors.Is(err, batontype.ErrStaleTick):
		ev.Err, ev.Outcome = err, observe.OutcomeHeld
		if errors.Is(err, batontype.ErrStaleTick) {
			ev.Outcome = observe.OutcomeStaleTick
		}
		if s.cfg.InspectOnSkip {
			s.fillHolder(ev)
		}
		s.skipped(j, tick, ev.Outcome, ev.LockedBy)
		s.cfg.Logger.DebugContext(s.runCtx, "scheduler: skipped tick: lock taken", "job", j.name, "tick", tick, "reason", err)
		claimed.Err, claimed.Outcome, claimed.LockedBy, claimed.Until = ev.Err, ev.Outcome, ev.LockedBy, ev.Until
		s.emit(res.ctx, observe.JobSkipped, &claimed)
		ev.Outcome = observe.OutcomeSkipped
	default:
		if !batontype.Definite(err) {
			// A lease may have been granted: running would risk a second
			// run of the tick, keeping it would block the job until the
			// lease expires.
			if rerr := lease.Abandon(s.runCtx, s.provider, j.name, owner, s.cfg.CallTimeout); rerr != nil {
				s.cfg.Logger.WarnContext(s.runCtx, "scheduler: release after a failed acquire; the lease lapses at its expiry", "job", j.name, "tick", tick, "err", rerr)
			}
		}
		if s.runCtx.Err() != nil {
			s.cfg.Logger.DebugContext(s.runCtx, "scheduler: acquire interrupted by close", "job", j.name, "tick", tick, "err", err)
			ev.Err, ev.Outcome = err, observe.OutcomeShutDown
			return
		}
		ev.Err = fmt.Errorf("scheduler: acquire %q for tick %s: %w", j.name, tick.Format(time.RFC3339Nano), err)
		j.failures.Add(1)
		msg := "scheduler: acquire failed; not running"
		if errors.Is(err, batontype.ErrInvalid) {
			s.cfg.Logger.ErrorContext(s.runCtx, msg, "job", j.name, "tick", tick, "err", err)
		} else {
			s.cfg.Logger.WarnContext(s.runCtx, msg, "job", j.name, "tick", tick, "err", err)
		}
		ev.Outcome = observe.OutcomeError
		claimed.Err, claimed.Outcome = ev.Err, ev.Outcome
		s.emit(res.ctx, observe.JobClaimFailed, &claimed)
	}
}

// hold starts the lease of a granted claim and returns it, or nil when the
// grant arrived after its trust window.
func (s *Scheduler) hold(j *Job, owner string, grant *batontype.Lease, sent time.Time, ev *Event, res *runResult) *lease.Lease {
	ev.Token = grant.Token
	lost := *ev
	l := new(lease.Lease)
	res.lease, res.held = *grant, time.Now()
	l.Start(res.ctx, s.lease, lease.Params{
		Release:    s.release(l, res),
		Name:       j.name,
		Owner:      owner,
		AtMostFor:  j.opts.atMostFor,
		AtLeastFor: res.atLeastFor(j),
		AutoRenew:  j.opts.autoRenew,
		OnLost: func(cause error) {
			j.lockLost.Add(1)
			lost.Err = cause
			s.emit(res.ctx, observe.JobLockLost, &lost)
		},
	}, *grant, sent)
	if l.Check() != nil {
		// The acquire took longer than the trust window: the lease may
		// already be someone else's. Do not start the job.
		_ = l.Release(s.runCtx)
		ev.Err, ev.Outcome = l.Err(), observe.OutcomeLockLost
		return nil
	}
	return l
}

// call runs the job function, recovering a panic, and reports the outcome.
func (s *Scheduler) call(ctx context.Context, j *Job, run Run, ev Event) error {
	j.runs.Add(1)
	ctx = s.emit(ctx, observe.JobStarted, &ev)
	start := s.now()
	err := protect(ctx, j.fn, run)
	ev.Start, ev.Duration, ev.Err = start, s.now().Sub(start), err
	if err != nil {
		j.failures.Add(1)
		attrs := []any{"job", j.name, "tick", run.Tick, "token", run.Token, "err", err}
		if pe := (*PanicError)(nil); errors.As(err, &pe) {
			attrs = append(attrs, "stack", batontype.CutStack(string(pe.Stack))) // as the ledger stores it
		}
		s.cfg.Logger.ErrorContext(s.runCtx, "scheduler: job failed", attrs...)
	}
	if s.obs != nil {
		ev.Outcome = s.runOutcome(err, run.lease, true)
		s.emit(ctx, observe.JobFinished, &ev)
	}
	return err
}

func protect(ctx context.Context, fn Func, run Run) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx, run)
}

// fillHolder reads the current holder of a lock this instance did not get.
func (s *Scheduler) fillHolder(ev *Event) {
	in, ok := s.provider.(lockprovider.Inspector)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.CallTimeout)
	defer cancel()
	if info, err := in.Inspect(ctx, ev.Job); err == nil && info.Held {
		ev.LockedBy, ev.Until = info.LockedBy, info.Until
	}
}
