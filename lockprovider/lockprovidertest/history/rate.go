package history

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Decision is one rate-limit decision: N units of Key under Limit, allowed
// or refused, at the backend's time of the decision (Result.Now).
type Decision struct {
	Key     string              `json:"key"`
	Limit   batontype.RateLimit `json:"limit"`
	N       int64               `json:"n"`
	Allowed bool                `json:"a"`
	At      int64               `json:"at"` // Unix ns: windows align to the epoch
	Proc    int                 `json:"proc,omitempty"`
}

// Rate records one rate-limit decision for n units of key under limit,
// made at the backend's time at. A decision under several limits is
// recorded once per limit.
func (h *History) Rate(key string, limit batontype.RateLimit, n int64, allowed bool, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rates = append(h.rates, Decision{Key: key, Limit: limit, N: n, Allowed: allowed, At: at.UnixNano()})
}

// rateViolations checks every key's admissions against its algorithm's
// bound, judged by the backend's times (which network and scheduling
// delays cannot move).
func rateViolations(ds []Decision) []string {
	type group struct {
		key   string
		limit batontype.RateLimit
	}
	by := map[group][]int64{}
	for _, d := range ds {
		if !d.Allowed {
			continue
		}
		g := group{d.Key, d.Limit}
		for range max(d.N, 1) {
			by[g] = append(by[g], d.At/int64(time.Microsecond))
		}
	}
	var out []string
	for g, a := range by {
		slices.SortFunc(a, cmp.Compare)
		if v := RateViolation(g.limit, a); v != "" {
			out = append(out, fmt.Sprintf("rate key %q, %s %d per %v: %s", g.key, g.limit.Algorithm, g.limit.Rate, g.limit.Period, v))
		}
	}
	slices.Sort(out)
	return out
}

// RateViolation describes the first definite violation of limit's bound by
// unit admissions at the sorted times a (µs, any common origin), or returns
// "". The bounds are the algorithms' documented ones: fixed window, at most
// Rate per window aligned to the epoch; sliding log, at most Rate in any
// span (t-Period, t]; sliding window, prev·(Period−e)/Period + cur ≤ Rate at
// every admission; token bucket and GCRA, at most Capacity + Rate·t/Period
// in any closed span of length t.
func RateViolation(limit batontype.RateLimit, a []int64) string {
	P := limit.Period.Microseconds()
	L := limit.Rate
	switch limit.Algorithm {
	case batontype.FixedWindow:
		count := map[int64]int64{}
		for _, t := range a {
			count[t/P]++
			if count[t/P] > L {
				return fmt.Sprintf("%d admissions in window %d", count[t/P], t/P)
			}
		}
	case batontype.SlidingLog:
		i := 0
		for j, t := range a {
			for a[i] <= t-P {
				i++
			}
			if int64(j-i+1) > L {
				return fmt.Sprintf("%d admissions in (%d, %d]", j-i+1, t-P, t)
			}
		}
	case batontype.SlidingWindow:
		// cur counts every admission of window k up to this instant (and
		// so at most L per window).
		count := map[int64]int64{}
		for _, t := range a {
			count[t/P]++
		}
		cur := map[int64]int64{}
		for j, t := range a {
			k := t / P
			cur[k]++
			c := cur[k]
			for j2 := j + 1; j2 < len(a) && a[j2] == t; j2++ {
				c++ // same microsecond: count them all
			}
			e := t - k*P
			// In integers: prev·(P−e) + cur·P ≤ L·P.
			if count[k-1]*(P-e)+c*P > L*P {
				return fmt.Sprintf("estimate %.3f at %d (window %d: prev %d, cur %d)", float64(count[k-1])*float64(P-e)/float64(P)+float64(c), t, k, count[k-1], c)
			}
		}
	case batontype.TokenBucket, batontype.GCRA:
		B := limit.Capacity()
		for i := range a {
			for j := i; j < len(a); j++ {
				if int64(j-i+1)*P > B*P+L*(a[j]-a[i]) {
					return fmt.Sprintf("%d admissions in [%d, %d], more than %d + %d·%dµs/%dµs", j-i+1, a[i], a[j], B, L, a[j]-a[i], P)
				}
			}
		}
	}
	return ""
}
