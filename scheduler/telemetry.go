package scheduler

import (
	"context"
	"errors"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/observe"
)

// Observe makes Hooks an observe.Observer: it calls the hook that stands
// for e's kind, if set, and returns ctx.
func (h Hooks) Observe(ctx context.Context, e observe.Event) context.Context {
	var f func(Event)
	switch e.Kind {
	case observe.JobAttempt:
		f = h.Attempt
	case observe.JobSkipped:
		f = h.Skipped
	case observe.JobStarted:
		f = h.Started
	case observe.JobFinished:
		f = h.Succeeded
		if e.Err != nil {
			f = h.Failed
		}
	case observe.JobClaimFailed:
		f = h.Failed
	case observe.JobCatchUp:
		if e.Err != nil {
			f = h.Failed
		}
	case observe.JobLockLost:
		f = h.LockLost
	}
	if f != nil {
		h.call(ctx, f, e)
	}
	return ctx
}

// call calls f, containing a panic.
func (h Hooks) call(ctx context.Context, f func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil && h.Logger != nil {
			h.Logger.ErrorContext(ctx, "scheduler: hook panicked", "job", e.Job, "panic", r)
		}
	}()
	f(e)
}

// runOutcome classifies a run that returned err, for the observer; l is
// the run's lease (nil for a job without Locked), and held is false when
// its release found it gone (see Scheduler.end).
func (s *Scheduler) runOutcome(err error, l *lease.Lease, held bool) string {
	lost := !held || l != nil && errors.Is(l.Err(), batontype.ErrLockLost)
	out, _ := s.outcome(runResult{err: err, lost: lost})
	return string(out)
}
