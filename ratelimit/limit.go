package ratelimit

import (
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Algorithm selects how a Limit counts; see the package documentation for
// a comparison.
type Algorithm = batontype.Algorithm

// The algorithms.
const (
	FixedWindow   = batontype.FixedWindow
	SlidingLog    = batontype.SlidingLog
	SlidingWindow = batontype.SlidingWindow
	TokenBucket   = batontype.TokenBucket
	GCRA          = batontype.GCRA
)

// Limit is one rate limit: Rate units per Period, counted by Algorithm.
type Limit struct {
	// Algorithm counts the units. Required: the zero Algorithm is none,
	// and New refuses it.
	Algorithm Algorithm
	// Rate is the number of units per Period: the quota of one window
	// for FixedWindow, SlidingLog and SlidingWindow, the refill rate for
	// TokenBucket and GCRA. At most one per microsecond of Period.
	// Required: at least 1, no default.
	Rate int64
	// Period is the window length or refill period, a whole number of
	// microseconds from 1ms to 366 days. Required: no default.
	Period time.Duration
	// Burst is the capacity of a TokenBucket or GCRA: how many units pass
	// at once after a quiet spell. Zero means Rate. Must be zero for the
	// window algorithms.
	Burst int64
	// Name names the policy in the RateLimit and RateLimit-Policy header
	// fields. Empty means "<rate>-per-<period>", the period as
	// time.Duration prints it without trailing zero units: "100-per-1s",
	// "100-per-1m", "10000-per-1h", "5-per-1h30m", "20-per-500ms", but
	// "5-per-1h0m5s". Printable ASCII only.
	Name string
}

// PerSecond is a GCRA limit of n per second with a burst of n.
func PerSecond(n int64) Limit { return Limit{Algorithm: GCRA, Rate: n, Period: time.Second, Burst: n} }

// PerMinute is a GCRA limit of n per minute with a burst of n.
func PerMinute(n int64) Limit { return Limit{Algorithm: GCRA, Rate: n, Period: time.Minute, Burst: n} }

// PerHour is a GCRA limit of n per hour with a burst of n.
func PerHour(n int64) Limit { return Limit{Algorithm: GCRA, Rate: n, Period: time.Hour, Burst: n} }

// Capacity is the most units the limit admits at once: Burst for
// TokenBucket and GCRA (Rate if Burst is zero), Rate otherwise.
func (l Limit) Capacity() int64 { return l.spi().Capacity() }

func (l Limit) spi() batontype.RateLimit {
	return batontype.RateLimit{Algorithm: l.Algorithm, Rate: l.Rate, Period: l.Period, Burst: l.Burst}
}

// policyName is the name used in header fields.
func (l Limit) policyName() string {
	if l.Name != "" {
		return l.Name
	}
	return strconv.FormatInt(l.Rate, 10) + "-per-" + shortDuration(l.Period)
}

// shortDuration is d.String() without trailing zero units: "1m" for
// "1m0s", "1h" for "1h0m0s", "1h30m" for "1h30m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-len("0s")]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-len("0m")]
	}
	return s
}

func (l Limit) validate() error {
	if err := l.spi().Validate(); err != nil {
		return batontype.InPkg("ratelimit", err)
	}
	for i := 0; i < len(l.Name); i++ {
		if c := l.Name[i]; c < 0x20 || c > 0x7e {
			return &batontype.ValidationError{Pkg: "ratelimit", Field: "Name", Value: strconv.Quote(l.Name), Reason: "must be printable ASCII", Err: batontype.ErrInvalidLimit}
		}
	}
	return nil
}
