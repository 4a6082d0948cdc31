package scheduler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/observe"
)

// observer returns the observer that feeds h from the scheduler's events,
// or nil when no hook is set.
func (h Hooks) observer(log *slog.Logger) observe.Observer {
	if h.Attempt == nil && h.Skipped == nil && h.Started == nil && h.Succeeded == nil &&
		h.Failed == nil && h.LockLost == nil {
		return nil
	}
	return &hooks{h: h, log: log}
}

// hooks calls the Hooks for the events they stand for.
type hooks struct {
	h   Hooks
	log *slog.Logger
}

func (o *hooks) Observe(ctx context.Context, e observe.Event) context.Context {
	var f func(Event)
	switch e.Kind {
	case observe.JobAttempt:
		f = o.h.Attempt
	case observe.JobSkipped:
		f = o.h.Skipped
	case observe.JobStarted:
		f = o.h.Started
	case observe.JobFinished:
		f = o.h.Succeeded
		if e.Err != nil {
			f = o.h.Failed
		}
	case observe.JobClaimFailed:
		f = o.h.Failed
	case observe.JobCatchUp:
		if e.Err != nil {
			f = o.h.Failed
		}
	case observe.JobLockLost:
		f = o.h.LockLost
	}
	if f != nil {
		o.call(ctx, f, e)
	}
	return ctx
}

// call calls f, containing a panic.
func (o *hooks) call(ctx context.Context, f func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil {
			o.log.ErrorContext(ctx, "scheduler: hook panicked", "job", e.Job, "panic", r)
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
