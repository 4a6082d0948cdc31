package batontype

import (
	"fmt"
	"strconv"
	"time"

	"github.com/baton-go/baton/internal/ratemath"
)

// Algorithm selects how a rate limit counts.
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
// (a request with a MaxDelay) and take a reservation back (a refund):
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

// RateInfo is the stored state of one limit of one rate-limit key, as a
// listing reports it.
type RateInfo struct {
	Key       string
	Algorithm Algorithm
	Period    time.Duration
	// ResetAt is when the limit is back at full capacity if nothing else
	// arrives (backend clock): when its state expires.
	ResetAt time.Time
}
