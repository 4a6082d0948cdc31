package lockprovider

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-go/baton/internal/ratemath"
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
// Errors: validation errors wrap ErrInvalid; any other error means the
// outcome is unknown (the cost may or may not have been charged).
//
// lockprovidertest.Run checks implementations (its Rate group).
type RateLimiter interface {
	RateLimit(ctx context.Context, r RateRequest) (RateResult, error)
}

// Algorithm selects how a RateLimit counts.
type Algorithm uint8

// The algorithms. All of them compute on the backend's clock in integer
// microseconds. See package ratelimit for a comparison.
const (
	// FixedWindow counts per window of Period aligned to the Unix epoch on
	// the server's clock: at most Rate per window, so up to 2×Rate can
	// pass in a short span around a window boundary.
	FixedWindow Algorithm = iota + 1
	// SlidingLog records every admitted unit and admits at most Rate in
	// any window of length Period. Exact; state grows with Rate.
	SlidingLog
	// SlidingWindow (the sliding window counter) weights the previous
	// fixed window's count by how much of it still overlaps the sliding
	// window: prev·(Period−elapsed)/Period + cur ≤ Rate. Two counters.
	SlidingWindow
	// TokenBucket holds up to Burst tokens, refilled at Rate per Period;
	// a request takes n tokens.
	TokenBucket
	// GCRA (generic cell rate algorithm, the leaky bucket as a meter)
	// stores one theoretical arrival time; it admits the same traffic as
	// a TokenBucket with the same Rate, Period and Burst.
	GCRA
)

var algNames = [...]string{"", "fixed_window", "sliding_log", "sliding_window", "token_bucket", "gcra"}

// String returns the algorithm's name in snake case, e.g. "fixed_window".
func (a Algorithm) String() string {
	if int(a) < len(algNames) && a != 0 {
		return algNames[a]
	}
	return "Algorithm(" + strconv.Itoa(int(a)) + ")"
}

// Reservable reports whether the algorithm can reserve a future slot
// (RateRequest.MaxDelay > 0) and take a reservation back (Refund):
// TokenBucket and GCRA. The window algorithms admit only at once.
func (a Algorithm) Reservable() bool { return a == TokenBucket || a == GCRA }

// Limits on rate-limit inputs, shared by every provider so that a request
// valid on one backend is valid on all.
const (
	// MaxRateLimits is the most limits one request may carry.
	MaxRateLimits = 8
	// MaxLogLimit is the largest Rate of a SlidingLog, which stores one
	// entry per admitted unit.
	MaxLogLimit = 100_000
)

// RateLimit is one limit of a request.
type RateLimit struct {
	Algorithm Algorithm
	// Rate is the number of units per Period: the window's quota for the
	// window algorithms, the refill rate for TokenBucket and GCRA. At most
	// one unit per microsecond.
	Rate int64
	// Period is the window length or refill period: a whole number of
	// microseconds, at least MinDuration, at most MaxDuration.
	Period time.Duration
	// Burst is the capacity of a TokenBucket or GCRA: how many units may
	// pass at once after a quiet spell. Zero means Rate. It must be zero
	// for the window algorithms, whose capacity is Rate.
	Burst int64
}

// Capacity is the most units the limit can ever admit at once: Burst for
// TokenBucket and GCRA (Rate when Burst is zero), Rate otherwise.
func (l RateLimit) Capacity() int64 {
	if l.Burst > 0 && l.Algorithm.Reservable() {
		return l.Burst
	}
	return l.Rate
}

// Validate checks one limit on its own.
func (l RateLimit) Validate() error {
	us := int64(l.Period / time.Microsecond)
	switch {
	case l.Algorithm < FixedWindow || l.Algorithm > GCRA:
		return invalid("Algorithm", l.Algorithm.String(), "is not a known algorithm", ErrInvalidLimit)
	case l.Rate <= 0:
		return invalid("Rate", strconv.FormatInt(l.Rate, 10), "must be positive", ErrInvalidLimit)
	case l.Period < MinDuration || l.Period > MaxDuration:
		return invalid("Period", l.Period.String(), "must be between "+MinDuration.String()+" and "+MaxDuration.String(), ErrInvalidLimit)
	case l.Period%time.Microsecond != 0:
		return invalid("Period", l.Period.String(), "must be a whole number of microseconds", ErrInvalidLimit)
	case l.Rate > us:
		return invalid("Rate", strconv.FormatInt(l.Rate, 10), "exceeds one per microsecond of Period "+l.Period.String(), ErrInvalidLimit)
	case l.Burst < 0:
		return invalid("Burst", strconv.FormatInt(l.Burst, 10), "must not be negative", ErrInvalidLimit)
	case l.Burst != 0 && !l.Algorithm.Reservable():
		return invalid("Burst", strconv.FormatInt(l.Burst, 10), "must be zero for "+l.Algorithm.String()+" (its capacity is Rate)", ErrInvalidLimit)
	}
	switch l.Algorithm {
	case SlidingLog:
		if l.Rate > MaxLogLimit {
			return invalid("Rate", strconv.FormatInt(l.Rate, 10), fmt.Sprintf("exceeds %d for sliding_log (one stored entry per unit)", MaxLogLimit), ErrInvalidLimit)
		}
	case SlidingWindow:
		if l.Rate > ratemath.MaxProduct/us {
			return invalid("Rate", strconv.FormatInt(l.Rate, 10), "× Period in microseconds exceeds 2^50; use a shorter Period", ErrInvalidLimit)
		}
	case TokenBucket, GCRA:
		p, _ := ratemath.Reduced(us, l.Rate)
		if l.Capacity() > ratemath.MaxProduct/p {
			return invalid("Burst", strconv.FormatInt(l.Capacity(), 10), fmt.Sprintf("× %dµs (Period/gcd(Period, Rate)) exceeds 2^50; use a shorter Period or a Rate that divides it", p), ErrInvalidLimit)
		}
	}
	return nil
}

// RateRequest is the input of RateLimiter.RateLimit.
type RateRequest struct {
	// Key is the subject limited, e.g. a user or client address: 1 to
	// MaxNameLen bytes of valid UTF-8 without control characters.
	Key string
	// N is the cost, at most the capacity of every limit. Zero peeks:
	// the result reports the state without charging anything.
	N int64
	// Limits are checked and charged together; 1 to MaxRateLimits, no two
	// with the same Algorithm and Period. A limit's state is identified by
	// Key, Algorithm and Period, so a limit whose Rate or Burst changes
	// keeps its state.
	Limits []RateLimit
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
	if err := validateText("Key", r.Key, MaxNameLen, ErrInvalidName, true); err != nil {
		return err
	}
	if len(r.Limits) == 0 || len(r.Limits) > MaxRateLimits {
		return invalid("Limits", strconv.Itoa(len(r.Limits))+" limits", "must be 1 to "+strconv.Itoa(MaxRateLimits), ErrInvalidLimit)
	}
	if r.N < 0 {
		return invalid("N", strconv.FormatInt(r.N, 10), "must not be negative", ErrInvalidCost)
	}
	if r.MaxDelay < 0 || r.MaxDelay > MaxDuration {
		return invalid("MaxDelay", r.MaxDelay.String(), "must be between 0 and "+MaxDuration.String(), ErrInvalidDuration)
	}
	for i, l := range r.Limits {
		if err := l.Validate(); err != nil {
			return err
		}
		if r.N > l.Capacity() {
			return invalid("N", strconv.FormatInt(r.N, 10), fmt.Sprintf("exceeds the capacity %d of %s limit %d/%v", l.Capacity(), l.Algorithm, l.Rate, l.Period), ErrExceedsCapacity)
		}
		if (r.MaxDelay > 0 || r.Refund) && !l.Algorithm.Reservable() {
			return invalid("Limits", l.Algorithm.String(), "cannot reserve or refund (only token_bucket and gcra can)", ErrNotReservable)
		}
		for _, o := range r.Limits[:i] {
			if o.Algorithm == l.Algorithm && o.Period == l.Period {
				return invalid("Limits", l.Algorithm.String()+" per "+l.Period.String(), "two limits with the same algorithm and period (they would share state)", ErrInvalidLimit)
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

// Rate-limit validation errors; all match ErrInvalid.
var (
	ErrInvalidLimit = fmt.Errorf("%w: rate limit", ErrInvalid)
	ErrInvalidCost  = fmt.Errorf("%w: cost", ErrInvalid)
	// ErrExceedsCapacity means the cost can never be admitted: it is
	// above the capacity of one of the limits.
	ErrExceedsCapacity = fmt.Errorf("%w: cost exceeds capacity", ErrInvalid)
	// ErrNotReservable means a reservation or refund asked of a window
	// algorithm.
	ErrNotReservable = fmt.Errorf("%w: algorithm cannot reserve", ErrInvalid)
)
