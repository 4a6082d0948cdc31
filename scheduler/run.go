package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// execute handles one tick of j on its own goroutine: claim, run, release.
// The caller has done s.wg.Add(1).
func (s *Scheduler) execute(j *Job, tick time.Time, catchUp bool) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Tick: tick, CatchUp: catchUp}
	if !j.running.CompareAndSwap(false, true) {
		ev.Err = ErrStillRunning
		j.skips.Add(1)
		s.cfg.Logger.DebugContext(s.runCtx, "scheduler: skipped tick: previous run still running", "job", j.name, "tick", tick)
		s.hook(s.cfg.Hooks.Skipped, ev)
		return
	}
	defer j.running.Store(false)

	if !j.locked {
		ctx, cancel := context.WithCancelCause(s.runCtx)
		defer cancel(nil)
		s.call(ctx, j, Run{Job: j.name, Tick: tick, CatchUp: catchUp}, ev)
		return
	}

	s.hook(s.cfg.Hooks.Attempt, ev)
	owner := lockprovider.NewOwner()
	sent := s.now()
	actx, cancel := context.WithTimeout(s.runCtx, s.cfg.CallTimeout)
	lease, err := s.claim(actx, lockprovider.AcquireParams{
		Name:       j.name,
		Owner:      owner,
		LockedBy:   s.cfg.LockedBy,
		AtMostFor:  j.opts.atMostFor,
		AtLeastFor: j.opts.atLeastFor,
		Tick:       tick,
	}, catchUp)
	cancel()
	switch {
	case err == nil:
	case errors.Is(err, lockprovider.ErrNotAcquired), errors.Is(err, lockprovider.ErrStaleTick):
		ev.Err = err
		j.skips.Add(1)
		if s.cfg.InspectOnSkip {
			s.fillHolder(&ev)
		}
		s.cfg.Logger.DebugContext(s.runCtx, "scheduler: skipped tick: lock taken", "job", j.name, "tick", tick, "reason", err)
		s.hook(s.cfg.Hooks.Skipped, ev)
		return
	case s.runCtx.Err() != nil:
		// Close interrupted the acquire; any lease granted lapses at expiry.
		s.cfg.Logger.DebugContext(s.runCtx, "scheduler: acquire interrupted by close", "job", j.name, "tick", tick, "err", err)
		return
	default:
		// The outcome is unknown: a lease may have been granted, and it
		// lapses at its expiry. Running would risk a second run of the tick.
		ev.Err = fmt.Errorf("scheduler: acquire %q for tick %s: %w", j.name, tick.Format(time.RFC3339Nano), err)
		j.failures.Add(1)
		level := "scheduler: acquire failed; not running"
		if errors.Is(err, lockprovider.ErrInvalid) {
			s.cfg.Logger.ErrorContext(s.runCtx, level, "job", j.name, "tick", tick, "err", err)
		} else {
			s.cfg.Logger.WarnContext(s.runCtx, level, "job", j.name, "tick", tick, "err", err)
		}
		s.hook(s.cfg.Hooks.Failed, ev)
		return
	}

	ev.Token = lease.Token
	// Trust window: the lease's length as granted by the provider, counted
	// on our clock from before the request was sent, so the window ends no
	// later than the lease does on the provider's clock.
	granted := lease.Until.Sub(lease.GrantedAt)
	if granted <= 0 || granted > j.opts.atMostFor {
		granted = j.opts.atMostFor
	}
	ctx, cancelJob := context.WithCancelCause(s.runCtx)
	defer cancelJob(nil)
	rl := &runLease{j: j, owner: owner, cancel: cancelJob, acquired: sent, ev: ev}
	rl.mu.Lock()
	window := sent.Add(granted).Sub(s.now())
	rl.timer = time.AfterFunc(window, rl.expire)
	rl.mu.Unlock()
	if window <= 0 {
		// The acquire took longer than the lease: it may already be
		// someone else's. Do not start the job.
		rl.lose(nil)
		s.release(j, owner, runResult{lease: lease, catchUp: catchUp, lost: true})
		return
	}

	var stopKeepAlive chan struct{}
	var keepAliveDone chan struct{}
	if j.opts.keepAlive {
		stopKeepAlive, keepAliveDone = make(chan struct{}), make(chan struct{})
		go rl.keepAlive(ctx, stopKeepAlive, keepAliveDone)
	}

	jobErr := s.call(ctx, j, Run{Job: j.name, Tick: tick, Token: lease.Token, CatchUp: catchUp, lease: rl}, ev)

	if stopKeepAlive != nil {
		close(stopKeepAlive)
		<-keepAliveDone
	}
	rl.mu.Lock()
	rl.timer.Stop()
	lost := rl.lost
	rl.lost = true // a Run.Extend after the job returned must not touch the lease
	rl.mu.Unlock()

	s.release(j, owner, runResult{lease: lease, catchUp: catchUp, err: jobErr, lost: lost})
}

// release ends a run's lease (the provider keeps it until its AtLeastFor
// bound). It works even when closing: WithoutCancel keeps the call alive
// after Close cancelled runCtx.
func (s *Scheduler) release(j *Job, owner string, r runResult) {
	token, tick, lost := r.lease.Token, r.lease.Tick, r.lost
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.runCtx), s.cfg.CallTimeout)
	defer cancel()
	err := s.releaseLease(ctx, owner, r)
	switch {
	case err == nil:
	case errors.Is(err, lockprovider.ErrNotHeld):
		if !lost {
			s.cfg.Logger.WarnContext(s.runCtx, "scheduler: lease had ended before release", "job", j.name, "tick", tick, "token", token)
		}
	default:
		s.cfg.Logger.WarnContext(s.runCtx, "scheduler: release failed; the lease lapses at its expiry", "job", j.name, "tick", tick, "token", token, "err", err)
	}
}

// call runs the job function, recovering a panic, and reports the outcome.
func (s *Scheduler) call(ctx context.Context, j *Job, run Run, ev Event) error {
	j.runs.Add(1)
	s.hook(s.cfg.Hooks.Started, ev)
	start := s.now()
	err := protect(ctx, j.fn, run)
	ev.Duration = s.now().Sub(start)
	if err != nil {
		ev.Err = err
		j.failures.Add(1)
		s.cfg.Logger.ErrorContext(s.runCtx, "scheduler: job failed", "job", j.name, "tick", run.Tick, "token", run.Token, "err", err)
		s.hook(s.cfg.Hooks.Failed, ev)
		return err
	}
	s.hook(s.cfg.Hooks.Succeeded, ev)
	return nil
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

// expire ends the trust window: the lease may have passed to another
// replica, so the job must stop.
func (rl *runLease) expire() { rl.lose(nil) }

// lose cancels the job context with ErrLockLost, once.
func (rl *runLease) lose(cause error) {
	rl.mu.Lock()
	if rl.lost {
		rl.mu.Unlock()
		return
	}
	rl.lost = true
	rl.timer.Stop()
	rl.mu.Unlock()
	s := rl.j.s
	rl.cancel(ErrLockLost)
	rl.j.lockLost.Add(1)
	ev := rl.ev
	ev.Err = ErrLockLost
	if cause != nil {
		ev.Err = fmt.Errorf("%w: %w", ErrLockLost, cause)
	}
	s.cfg.Logger.WarnContext(s.runCtx, "scheduler: lock lost while the job ran; job context cancelled",
		"job", rl.j.name, "tick", ev.Tick, "token", ev.Token, "err", ev.Err)
	s.hook(s.cfg.Hooks.LockLost, ev)
}

// extend asks the provider for d more and moves the trust window.
func (rl *runLease) extend(ctx context.Context, d time.Duration) error {
	j, s := rl.j, rl.j.s
	rl.mu.Lock()
	lost := rl.lost
	rl.mu.Unlock()
	if lost {
		return ErrLockLost
	}
	sent := s.now()
	// Keep the original minimum hold: what is left of it, within the new
	// lease.
	atLeast := min(max(rl.acquired.Add(j.opts.atLeastFor).Sub(sent), 0), d)
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	_, err := s.provider.Extend(cctx, lockprovider.ExtendParams{Name: j.name, Owner: rl.owner, AtMostFor: d, AtLeastFor: atLeast})
	cancel()
	switch {
	case err == nil:
		rl.mu.Lock()
		defer rl.mu.Unlock()
		if rl.lost {
			return ErrLockLost // the window closed while we asked
		}
		rl.timer.Reset(sent.Add(d).Sub(s.now()))
		return nil
	case errors.Is(err, lockprovider.ErrNotHeld):
		rl.lose(err)
		return fmt.Errorf("%w: %w", ErrLockLost, err)
	default:
		return fmt.Errorf("scheduler: extend %q: %w", j.name, err)
	}
}

// keepAlive extends the lease every atMostFor/3 until stop is closed. A
// failed extension of unknown outcome is retried at the next period; the
// trust window still ends the run if none succeeds in time.
func (rl *runLease) keepAlive(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	period := rl.j.opts.atMostFor / 3
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			err := rl.extend(ctx, rl.j.opts.atMostFor)
			if errors.Is(err, ErrLockLost) {
				return
			}
			if err != nil {
				rl.j.s.cfg.Logger.WarnContext(ctx, "scheduler: keep-alive extension failed; retrying next period", "job", rl.j.name, "err", err)
			}
		}
	}
}
