package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/isnil"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Errors of this package. Validation errors are lockprovider's: they
// match batontype.ErrInvalid (and ErrInvalid here) with errors.Is and
// *batontype.ValidationError with errors.As.
var (
	// ErrInvalid matches every validation error.
	ErrInvalid = batontype.ErrInvalid
	// ErrExceedsCapacity means a cost above the capacity of a limit: it
	// could never be admitted.
	ErrExceedsCapacity = batontype.ErrExceedsCapacity
	// ErrWouldExceedDeadline means Wait gave up at once, without
	// consuming anything, because the context's deadline comes before the
	// request could be admitted.
	ErrWouldExceedDeadline = errors.New("ratelimit: wait would exceed context deadline")
	// ErrNilProvider is returned by New for a nil provider (a typed nil
	// such as a nil *memory.Provider included), and by the methods of a
	// nil or zero Limiter (one not made by New). It is a
	// *batontype.ValidationError.
	ErrNilProvider = batontype.ErrNilProvider
	// ErrNilContext is returned for a nil context. It is a
	// *batontype.ValidationError, the same value as
	// batontype.ErrNilContext.
	ErrNilContext = batontype.ErrNilContext
)

// Limiter limits keys with one or more limits, checked and charged together
// on a provider's server. It is safe for concurrent use by multiple
// goroutines and holds no state of its own: many Limiters, in many
// processes, with the same provider and limits share the same budget per
// key.
type Limiter struct {
	provider   lockprovider.RateLimiter
	limits     []Limit
	spi        []batontype.RateLimit
	capacity   int64
	reservable bool
	obs        observe.Observer // Config.Observer; nil: no events
	names      []string         // policy names of limits, for events
	policy     string           // names joined by ","
}

// Config configures a Limiter. The zero value (or a nil *Config) is the
// default.
type Config struct {
	// Observer receives the Limiter's decisions, provider errors and the
	// Middleware's fail-open and fail-closed fallbacks (package observe:
	// RateDecision, RateError, RateFallback). Events name the limit by
	// its policy name (Limit.Name, or "<rate>-per-<period>"), never by
	// key. Nil (the default) reports nothing.
	Observer observe.Observer
}

// New returns a Limiter that charges every request to all of limits at once
// on provider: a request is admitted only if every limit admits it. Two limits
// must not share both Algorithm and Period. At least one and at most
// batontype.MaxRateLimits limits. A nil cfg means the defaults. Limiters
// with the same provider and limits share the same budgets, whatever their
// Config.
func New(provider lockprovider.RateLimiter, limits []Limit, cfg *Config) (*Limiter, error) {
	if isnil.IsNil(provider) {
		return nil, ErrNilProvider
	}
	l := &Limiter{provider: provider, limits: append([]Limit(nil), limits...), reservable: true}
	if cfg != nil {
		l.obs = observe.Join(cfg.Observer)
	}
	for _, lim := range limits {
		if err := lim.validate(); err != nil {
			return nil, err
		}
		l.spi = append(l.spi, lim.spi())
		l.names = append(l.names, lim.policyName())
		if c := lim.Capacity(); l.capacity == 0 || c < l.capacity {
			l.capacity = c
		}
		l.reservable = l.reservable && lim.Algorithm.Reservable()
	}
	l.policy = strings.Join(l.names, ",")
	// The request validation checks the count and duplicate limits.
	if err := (lockprovider.RateRequest{Key: "k", N: 0, Limits: l.spi}).Validate(); err != nil {
		return nil, batontype.InPkg("ratelimit", err)
	}
	return l, nil
}

// Limits returns the limits, in the order given to New (none for a nil or
// zero Limiter).
func (l *Limiter) Limits() []Limit {
	if l == nil {
		return nil
	}
	return append([]Limit(nil), l.limits...)
}

// Result is the outcome of a decision.
type Result struct {
	// Allowed reports whether the request was admitted (and charged).
	Allowed bool
	// Remaining is how many more units the tightest limit admits now.
	Remaining int64
	// Limit is the tightest limit: on refusal the one that keeps the
	// request out longest, otherwise the one with the fewest remaining.
	Limit Limit
	// RetryAfter is, when refused, how long until the same request would
	// be admitted if nothing else arrived; zero when allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until every limit is back to full capacity
	// if nothing else arrives.
	ResetAfter time.Duration
	// ServerTime is the provider's clock at the decision.
	ServerTime time.Time
	// States has one entry per limit, in the order given to New.
	States []State
}

// State is one limit's part of a Result.
type State struct {
	Limit      Limit
	Remaining  int64
	RetryAfter time.Duration // until this limit alone admits the request
	ResetAfter time.Duration // until this limit is back to full capacity
}

// Allow is AllowN(ctx, key, 1).
func (l *Limiter) Allow(ctx context.Context, key string) (Result, error) {
	return l.AllowN(ctx, key, 1)
}

// AllowN decides whether n units for key may pass now and charges them if
// so, in one atomic round trip to the provider. A refused request is charged
// nothing. n = 0 peeks at the state without charging: Allowed is then true
// and RetryAfter zero whatever the state, and Remaining and ResetAfter
// describe it. n above the capacity
// of a limit is an error matching ErrExceedsCapacity (it could never
// pass). Any error other than a validation error means the outcome is
// unknown.
func (l *Limiter) AllowN(ctx context.Context, key string, n int64) (Result, error) {
	if err := l.check(ctx); err != nil {
		return Result{}, err
	}
	var start time.Time
	if l.obs != nil {
		start = time.Now()
	}
	res, err := l.provider.RateLimit(ctx, lockprovider.RateRequest{Key: key, N: n, Limits: l.spi})
	if err != nil {
		if l.obs != nil {
			l.failed(ctx, start, err)
		}
		return Result{}, err
	}
	out := l.result(res)
	if l.obs != nil {
		l.decided(ctx, start, n, out.Allowed, out.Limit, out.RetryAfter)
	}
	return out, nil
}

// check refuses a nil or zero Limiter and a nil ctx, which would otherwise
// panic inside the provider.
func (l *Limiter) check(ctx context.Context) error {
	if l == nil || l.provider == nil {
		return ErrNilProvider
	}
	if ctx == nil {
		return ErrNilContext
	}
	return nil
}

func (l *Limiter) result(r lockprovider.RateResult) Result {
	out := Result{Allowed: r.Allowed, RetryAfter: r.RetryAfter, ServerTime: r.Now, States: make([]State, len(r.Limits))}
	best := -1
	for i, s := range r.Limits {
		out.States[i] = State{Limit: l.limits[i], Remaining: s.Remaining, RetryAfter: s.RetryAfter, ResetAfter: s.ResetAfter}
		out.ResetAfter = max(out.ResetAfter, s.ResetAfter)
		switch {
		case best < 0:
			best = i
		case !r.Allowed && s.RetryAfter != r.Limits[best].RetryAfter:
			if s.RetryAfter > r.Limits[best].RetryAfter {
				best = i
			}
		case s.Remaining < r.Limits[best].Remaining:
			best = i
		}
	}
	if best >= 0 {
		out.Remaining = r.Limits[best].Remaining
		out.Limit = l.limits[best]
	}
	return out
}

// Wait is WaitN(ctx, key, 1).
func (l *Limiter) Wait(ctx context.Context, key string) error { return l.WaitN(ctx, key, 1) }

// WaitN blocks until n units for key may pass, and charges them.
//
// The application's clock is used only to measure how much of ctx's
// deadline is left (a difference of two readings of the same clock) and to
// sleep; the provider's clock decides.
//
// When every limit is a TokenBucket or GCRA, WaitN reserves: one round trip
// books the earliest slot on the server (the leaky bucket as a queue, first
// come first served), then WaitN sleeps until it. The reservation is made
// only if the slot falls before ctx's deadline; otherwise WaitN returns
// ErrWouldExceedDeadline at once and nothing is charged. If ctx ends during
// the sleep, or is cancelled while the booking is on its way (the booking is
// then given up to refundTimeout to answer), WaitN gives the units back (a
// refund, best effort, bounded by refundTimeout, one second) and returns the
// context's error.
//
// With a window algorithm among the limits, nothing can be booked ahead:
// WaitN tries, and when refused sleeps for the RetryAfter the provider
// reported and tries again; it returns ErrWouldExceedDeadline as soon as a
// RetryAfter reaches past the deadline. Waiters are then not served in
// arrival order.
//
// n above the capacity of a limit fails at once with ErrExceedsCapacity.
func (l *Limiter) WaitN(ctx context.Context, key string, n int64) error {
	if err := l.check(ctx); err != nil {
		return err
	}
	if n > l.capacity {
		return batontype.InPkg("ratelimit", (lockprovider.RateRequest{Key: key, N: n, Limits: l.spi}).Validate())
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		budget := time.Duration(batontype.MaxDuration)
		if dl, ok := ctx.Deadline(); ok {
			budget = dl.Sub(start)
			if budget <= 0 {
				return ErrWouldExceedDeadline
			}
		}
		req := lockprovider.RateRequest{Key: key, N: n, Limits: l.spi}
		if l.reservable {
			req.MaxDelay = min(budget, batontype.MaxDuration).Truncate(time.Microsecond)
		}
		res, err := l.take(ctx, req)
		if l.obs != nil {
			l.waited(ctx, start, n, res, err)
		}
		if err != nil {
			return err
		}
		if l.reservable && res.Allowed && ctx.Err() != nil {
			// ctx ended while the booking was on its way: the caller is
			// gone, so the slot it booked goes back.
			l.refund(ctx, key, n)
			return ctx.Err()
		}
		// The slot (or retry time) counts from the server's decision, which
		// came no later than now: sleeping from now is never early.
		left := budget - time.Since(start)
		if !res.Allowed {
			if res.RetryAfter > left {
				return fmt.Errorf("%w (retry after %v)", ErrWouldExceedDeadline, res.RetryAfter)
			}
			if err := sleep(ctx, res.RetryAfter); err != nil {
				return err
			}
			continue
		}
		if res.Delay == 0 {
			return nil
		}
		if res.Delay > left {
			l.refund(ctx, key, n)
			return fmt.Errorf("%w (slot in %v)", ErrWouldExceedDeadline, res.Delay)
		}
		if err := sleep(ctx, res.Delay); err != nil {
			l.refund(ctx, key, n)
			return err
		}
		return nil
	}
}

// refundTimeout bounds a refund, which runs after the caller's context
// ended, and how long a booking already sent may take to answer once the
// caller's context is cancelled: long enough for one round trip to a
// healthy provider, short enough not to hold up a caller that is giving up.
const refundTimeout = time.Second

// take sends WaitN's request. A booking cut off mid-flight would leave its
// outcome unknown, and a slot booked then could never be given back; so a
// cancellation of ctx leaves a booking refundTimeout to answer, after which
// it is cut. ctx's deadline still applies: the server books nothing past
// it (MaxDelay), so a slot lost to a deadline cut is unused capacity, never
// extra.
func (l *Limiter) take(ctx context.Context, req lockprovider.RateRequest) (lockprovider.RateResult, error) {
	if !l.reservable {
		return l.provider.RateLimit(ctx, req)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel() // last: it also ends the grace goroutine below
	detached := rctx
	if dl, ok := ctx.Deadline(); ok {
		var cancelDL context.CancelFunc
		rctx, cancelDL = context.WithDeadline(rctx, dl)
		defer cancelDL()
	}
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(refundTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-detached.Done():
		}
	})
	defer stop()
	return l.provider.RateLimit(rctx, req)
}

// refund gives back a reservation that will not be used, even though ctx
// has ended.
func (l *Limiter) refund(ctx context.Context, key string, n int64) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundTimeout)
	defer cancel()
	// Best effort: if the refund is lost, the slot simply goes unused; the
	// observer hears of it, as of any provider failure.
	_, err := l.provider.RateLimit(rctx, lockprovider.RateRequest{Key: key, N: n, Limits: l.spi, Refund: true})
	if err != nil && l.obs != nil {
		l.failed(ctx, start, fmt.Errorf("ratelimit: refund: %w", err))
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
