package lockprovidertest

import (
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The bound checker catches violations, so a passing Bounds subtest means
// something.
func TestViolationChecker(t *testing.T) {
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
		if got := violation(tc.limit, tc.a); (got != "") != tc.bad {
			t.Errorf("case %d (%s %v): violation %q; want violation=%v", i, tc.limit.Algorithm, tc.a, got, tc.bad)
		}
	}
}

// replay admits what the algorithm admits: the arrivals of a burst at one
// instant are admitted up to the capacity.
func TestReplay(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	all := make([]decision, 10)
	for i := range all {
		all[i] = decision{at: at}
	}
	for _, alg := range rateAlgorithms {
		if n := replay(t, batontype.RateLimit{Algorithm: alg, Rate: 4, Period: time.Second}, all); n != 4 {
			t.Errorf("%s: replay admitted %d of a burst of 10; want the capacity 4", alg, n)
		}
	}
}
