package history

import (
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
)

// The bound checker catches violations, so a passing Bounds subtest means
// something.
func TestRateViolation(t *testing.T) {
	t.Parallel()
	s := int64(time.Second / time.Microsecond)
	lim := func(alg batontype.Algorithm, burst int64) batontype.RateLimit {
		return batontype.RateLimit{Algorithm: alg, Rate: 2, Period: time.Second, Burst: burst}
	}
	cases := []struct {
		limit batontype.RateLimit
		a     []int64
		bad   bool
	}{
		{lim(batontype.FixedWindow, 0), []int64{10*s + 1, 10*s + 2, 11*s - 1}, true},
		{lim(batontype.FixedWindow, 0), []int64{11*s - 2, 11*s - 1, 11 * s, 11*s + 1}, false}, // boundary burst is allowed
		{lim(batontype.SlidingLog, 0), []int64{11*s - 2, 11*s - 1, 11 * s}, true},
		{lim(batontype.SlidingLog, 0), []int64{10 * s, 10*s + 1, 11 * s, 11*s + 1}, false},
		{lim(batontype.SlidingWindow, 0), []int64{10 * s, 10*s + 1, 11*s + s/4}, true}, // 2·0.75 + 1 > 2
		{lim(batontype.SlidingWindow, 0), []int64{10 * s, 10*s + 1, 11*s + s/2}, false},
		{lim(batontype.GCRA, 2), []int64{10 * s, 10 * s, 10*s + s/2 - 1}, true},
		{lim(batontype.GCRA, 2), []int64{10 * s, 10 * s, 10*s + s/2}, false},
		{lim(batontype.TokenBucket, 1), []int64{10 * s, 10*s + s/2 - 1}, true},
	}
	for i, tc := range cases {
		if got := RateViolation(tc.limit, tc.a); (got != "") != tc.bad {
			t.Errorf("case %d (%s %v): violation %q; want violation=%v", i, tc.limit.Algorithm, tc.a, got, tc.bad)
		}
	}
}
