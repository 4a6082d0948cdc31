package ratelimit

import (
	"context"
	"errors"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// decided reports a decision that began at start.
func (l *Limiter) decided(ctx context.Context, start time.Time, n int64, allowed bool, tightest Limit, retryAfter time.Duration) {
	e := observe.Event{Kind: observe.RateDecision, Policy: l.policy, Cost: n, Outcome: observe.OutcomeAllowed,
		Start: start, Duration: time.Since(start)}
	for i := range l.limits {
		if l.limits[i] == tightest {
			e.Policy = l.names[i]
			break
		}
	}
	if !allowed {
		e.Outcome, e.RetryAfter = observe.OutcomeDenied, retryAfter
	}
	l.obs.Observe(ctx, e)
}

// failed reports a provider call that began at start and failed with err.
// Bad input is not the provider's failure and is not reported.
func (l *Limiter) failed(ctx context.Context, start time.Time, err error) {
	if errors.Is(err, batontype.ErrInvalid) {
		return
	}
	l.obs.Observe(ctx, observe.Event{Kind: observe.RateError, Policy: l.policy, Outcome: observe.OutcomeError,
		Err: err, Start: start, Duration: time.Since(start)})
}

// waited reports one provider call of WaitN.
func (l *Limiter) waited(ctx context.Context, start time.Time, n int64, res lockprovider.RateResult, err error) {
	if err != nil {
		l.failed(ctx, start, err)
		return
	}
	out := l.result(res)
	l.decided(ctx, start, n, out.Allowed, out.Limit, out.RetryAfter)
}

// fellBack reports that the Middleware let a request through (failOpen)
// or refused it because the provider failed with err.
func (l *Limiter) fellBack(ctx context.Context, failOpen bool, err error) {
	if l == nil || l.obs == nil {
		return
	}
	e := observe.Event{Kind: observe.RateFallback, Policy: l.policy, Outcome: observe.OutcomeFailClosed, Err: err}
	if failOpen {
		e.Outcome = observe.OutcomeFailOpen
	}
	l.obs.Observe(ctx, e)
}
