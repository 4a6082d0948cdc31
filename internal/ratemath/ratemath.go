// Package ratemath holds the integer arithmetic that the rate-limit
// validation (package lockprovider) and the providers share, so that a
// limit valid on one backend is computed exactly on every backend.
package ratemath

// MaxProduct bounds Burst × Period/gcd(Period, Rate) (Period in
// microseconds) for TokenBucket and GCRA, and Rate × Period for
// SlidingWindow: below it every backend computes exactly in integers,
// including Redis, whose Lua numbers are IEEE doubles (exact to 2^53).
const MaxProduct = 1 << 50

// Reduced returns periodMicros/g and rate/g, where g is their greatest
// common divisor: the exact emission interval of a TokenBucket or GCRA of
// rate units per period is p/q microseconds, a fraction that integer
// arithmetic carries without rounding.
func Reduced(periodMicros, rate int64) (p, q int64) {
	a, b := periodMicros, rate
	for b != 0 {
		a, b = b, a%b
	}
	if a == 0 {
		return periodMicros, rate
	}
	return periodMicros / a, rate / a
}
