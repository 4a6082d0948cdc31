package lockprovider

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"
)

// RateLimiter is implemented by providers that make rate-limit decisions on
// the server. It is an optional capability: consumers discover it by type
// assertion or require it in a parameter type (package ratelimit does).
//
// RateLimit decides one request in one atomic round trip, on the backend's
// clock. It first validates r (see [RateRequest.Validate]). Every limit of
// the request is checked against the state of r.Key; the request is
// admitted only if every limit admits it, and only then is the cost charged
// to every limit. A refused request changes nothing. State expires on the
// backend once it no longer affects decisions, so unused keys cost nothing.
//
// Errors: validation errors wrap batontype.ErrInvalid; any other error means the
// outcome is unknown (the cost may or may not have been charged).
//
// lockprovidertest.Run checks implementations (its Rate group).
type RateLimiter interface {
	RateLimit(ctx context.Context, r RateRequest) (RateResult, error)
}

// RateRequest is the input of RateLimiter.RateLimit.
type RateRequest struct {
	// Key is the subject limited, e.g. a user or client address: 1 to
	// batontype.MaxNameLen bytes of valid UTF-8 without control characters.
	Key string
	// N is the cost, at most the capacity of every limit. Zero peeks:
	// the result reports the state without charging anything.
	N int64
	// Limits are checked and charged together; 1 to batontype.MaxRateLimits, no two
	// with the same batontype.Algorithm and Period. A limit's state is identified by
	// Key, batontype.Algorithm and Period, so a limit whose Rate or Burst changes
	// keeps its state.
	Limits []batontype.RateLimit
	// MaxDelay, when positive, reserves: the request is admitted if every
	// limit can admit it within MaxDelay, and RateResult.Delay says how
	// long the caller must wait before acting. Every limit must be
	// Reservable. Zero admits only at once.
	MaxDelay time.Duration
	// Refund gives N units back to every limit, e.g. for a reservation
	// that was cancelled before its time. Every limit must be Reservable.
	// A refund never raises a limit above its capacity.
	Refund bool
}

// Validate checks every field of r.
func (r RateRequest) Validate() error {
	if err := batontype.ValidateKey(r.Key); err != nil {
		return err
	}
	if len(r.Limits) == 0 || len(r.Limits) > batontype.MaxRateLimits {
		return batontype.Invalid("Limits", strconv.Itoa(len(r.Limits))+" limits", "must be 1 to "+strconv.Itoa(batontype.MaxRateLimits), batontype.ErrInvalidLimit)
	}
	if r.N < 0 {
		return batontype.Invalid("N", strconv.FormatInt(r.N, 10), "must not be negative", batontype.ErrInvalidCost)
	}
	if r.MaxDelay < 0 || r.MaxDelay > batontype.MaxDuration {
		return batontype.Invalid("MaxDelay", r.MaxDelay.String(), "must be between 0 and "+batontype.MaxDuration.String(), batontype.ErrInvalidDuration)
	}
	for i, l := range r.Limits {
		if err := l.Validate(); err != nil {
			return err
		}
		if r.N > l.Capacity() {
			return batontype.Invalid("N", strconv.FormatInt(r.N, 10), fmt.Sprintf("exceeds the capacity %d of %s limit %d/%v", l.Capacity(), l.Algorithm, l.Rate, l.Period), batontype.ErrExceedsCapacity)
		}
		if (r.MaxDelay > 0 || r.Refund) && !l.Algorithm.Reservable() {
			return batontype.Invalid("Limits", l.Algorithm.String(), "cannot reserve or refund (only token_bucket and gcra can)", batontype.ErrNotReservable)
		}
		for _, o := range r.Limits[:i] {
			if o.Algorithm == l.Algorithm && o.Period == l.Period {
				return batontype.Invalid("Limits", l.Algorithm.String()+" per "+l.Period.String(), "two limits with the same algorithm and period (they would share state)", batontype.ErrInvalidLimit)
			}
		}
	}
	return nil
}

// RateResult is the outcome of RateLimiter.RateLimit.
type RateResult struct {
	// Allowed reports that the request was admitted and charged (or, for
	// a peek or refund, that it was carried out).
	Allowed bool
	// Delay is, for an admitted reservation, how long the caller must wait
	// before the reserved slot; zero otherwise.
	Delay time.Duration
	// RetryAfter is, for a refused request, how long until the same
	// request would be admitted if nothing else arrived; zero when
	// admitted.
	RetryAfter time.Duration
	// Now is the backend's clock at the decision, to the microsecond.
	Now time.Time
	// Limits has the state of each limit after the decision, in the
	// order of RateRequest.Limits.
	Limits []RateState
}

// RateState is the state of one limit after a decision.
type RateState struct {
	// Remaining is how many units the limit would admit now, never
	// negative.
	Remaining int64
	// RetryAfter is how long until this limit alone would admit the
	// request; zero if it admits it now.
	RetryAfter time.Duration
	// ResetAfter is how long until the limit is back to full capacity if
	// nothing else arrives.
	ResetAfter time.Duration
}
