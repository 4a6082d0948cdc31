package baton

import (
	"context"
	"errors"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/observe"
)

// reported calls acquire (TryAcquire's or Acquire's body) and reports its
// result to the observer, if there is one.
func (l *Locker) reported(ctx context.Context, name string, opts *AcquireOptions,
	acquire func(*Locker, context.Context, string, *AcquireOptions) (*Lock, error)) (*Lock, error) {
	if l == nil || l.obs == nil || ctx == nil {
		return acquire(l, ctx, name, opts)
	}
	start := time.Now()
	lock, err := acquire(l, ctx, name, opts)
	l.acquired(ctx, name, start, lock, err)
	return lock, err
}

// acquired reports the end of a TryAcquire or Acquire that began at start
// to the Locker's observer, which is set.
func (l *Locker) acquired(ctx context.Context, name string, start time.Time, lock *Lock, err error) {
	e := observe.Event{Kind: observe.LockRefused, Name: name, Start: start, Duration: time.Since(start),
		Outcome: outcome(err), Err: err}
	if err == nil {
		e.Kind, e.Token = observe.LockAcquired, lock.Token()
	}
	l.obs.Observe(ctx, e)
}

// attempted reports one acquire call, sent at start, to the observer,
// which is set.
func (l *Locker) attempted(ctx context.Context, r request, start time.Time, err error) {
	l.obs.Observe(ctx, observe.Event{Kind: observe.LockAttempt, Name: r.params.Name,
		Start: start, Duration: time.Since(start), Outcome: outcome(err), Err: err})
}

// outcome classifies the result of an acquire for observers. A context
// that ended comes first: Acquire's error then also matches the latest
// attempt's.
func outcome(err error) string {
	switch {
	case err == nil:
		return observe.OutcomeGranted
	case errors.Is(err, ErrInvalid):
		return observe.OutcomeInvalid
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return observe.OutcomeCanceled
	case errors.Is(err, ErrNotAcquired), errors.Is(err, batontype.ErrStaleTick):
		return observe.OutcomeRefused
	case errors.Is(err, ErrUnavailable):
		return observe.OutcomeUnavailable
	}
	return observe.OutcomeError
}
