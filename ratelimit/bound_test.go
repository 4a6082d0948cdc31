package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/ratelimit"
)

type decision struct {
	at      int64 // server time, µs
	allowed bool
}

// The bound checker: 50 goroutines offer about 5× a limit of 100 per
// second for 10 windows, on every store and every algorithm. Decisions are
// judged by the server time each one reports (the instant the store
// decided, read inside the atomic step), never by client clocks, so
// network and scheduling delays cannot produce false verdicts. The check
// fails on any definite violation of the algorithm's bound, and when the
// store admitted less than 90% of what the algorithm itself admits for the
// same arrivals (replayed in server-time order through the memory store,
// the reference implementation).
func TestBounds(t *testing.T) {
	t.Parallel()
	const (
		workers = 50
		rate    = 100
		period  = time.Second
		windows = 10
	)
	// go test runs only GOMAXPROCS parallel subtests at a time, so the
	// load of all combinations starts here at once and the subtests judge
	// the outcomes: the wall time stays one run's.
	type outcome struct {
		all  []decision
		errs []error
	}
	type combo struct {
		name  string
		limit ratelimit.Limit
		done  chan outcome
	}
	var combos []combo
	for _, sc := range stores {
		for _, alg := range allAlgorithms {
			c := combo{sc.name + "/" + alg.String(), ratelimit.Limit{Algorithm: alg, Rate: rate, Period: period}, make(chan outcome, 1)}
			combos = append(combos, c)
			l := mustNew(t, sc.new(t), c.limit)
			key := "bound-" + testenv.Unique()
			go func() {
				var (
					mu    sync.Mutex
					out   outcome
					wg    sync.WaitGroup
					until = time.Now().Add(windows * period)
				)
				for w := range workers {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(w), 1))
						var mine []decision
						for time.Now().Before(until) {
							res, err := l.Allow(context.Background(), key)
							if err != nil {
								mu.Lock()
								out.errs = append(out.errs, err)
								mu.Unlock()
								return
							}
							mine = append(mine, decision{res.ServerTime.UnixMicro(), res.Allowed})
							// 50 workers × one request per ~100ms ≈ 5× the limit.
							time.Sleep(time.Duration(50+rng.IntN(100)) * time.Millisecond)
						}
						mu.Lock()
						out.all = append(out.all, mine...)
						mu.Unlock()
					})
				}
				wg.Wait()
				c.done <- out
			}()
		}
	}
	for _, c := range combos {
		t.Run(c.name, func(t *testing.T) {
			out := <-c.done
			if len(out.errs) > 0 {
				t.Fatalf("%d store errors, first: %v", len(out.errs), out.errs[0])
			}
			all := out.all
			slices.SortStableFunc(all, func(a, b decision) int { return int(a.at - b.at) })
			var admitted []int64
			for _, d := range all {
				if d.allowed {
					admitted = append(admitted, d.at)
				}
			}
			if v := violation(c.limit, admitted); v != "" {
				t.Errorf("bound violated: %s", v)
			}
			ideal := replay(t, c.limit, all)
			t.Logf("%d requests, %d admitted; the algorithm admits %d of the same arrivals", len(all), len(admitted), ideal)
			if float64(len(admitted)) < 0.9*float64(ideal) {
				t.Errorf("admitted %d; want at least 90%% of the %d the algorithm admits (over-blocking)", len(admitted), ideal)
			}
			// The limit must have bound (a slow store on a busy machine may
			// serve less than the offered load, which is no failure).
			if len(admitted) == len(all) {
				t.Errorf("all %d requests admitted: the offered load did not reach the limit", len(all))
			}
		})
	}
}

// replay runs the arrivals through the memory store at their server times
// and returns how many it admits.
func replay(t *testing.T, limit ratelimit.Limit, all []decision) int {
	t.Helper()
	clk := newFakeClock(time.UnixMicro(all[0].at))
	l := mustNew(t, memoryAt(clk), limit)
	n := 0
	for _, d := range all {
		clk.mu.Lock()
		clk.t = time.UnixMicro(d.at)
		clk.mu.Unlock()
		if allow(t, l, "k", 1).Allowed {
			n++
		}
	}
	return n
}

// violation returns a description of the first definite violation of the
// limit's bound by admissions at the sorted server times a (µs), or "".
func violation(limit ratelimit.Limit, a []int64) string {
	P := limit.Period.Microseconds()
	L := limit.Rate
	switch limit.Algorithm {
	case ratelimit.FixedWindow:
		// At most L per window aligned to the epoch.
		count := map[int64]int64{}
		for _, t := range a {
			count[t/P]++
			if count[t/P] > L {
				return fmt.Sprintf("%d admissions in window %d", count[t/P], t/P)
			}
		}
	case ratelimit.SlidingLog:
		// At most L in any span (t-P, t].
		i := 0
		for j, t := range a {
			for a[i] <= t-P {
				i++
			}
			if int64(j-i+1) > L {
				return fmt.Sprintf("%d admissions in (%d, %d]", j-i+1, t-P, t)
			}
		}
	case ratelimit.SlidingWindow:
		// At each admission at elapsed e into window k:
		// prev·(P−e)/P + cur ≤ L, cur counting every admission of window k
		// up to this instant (and so at most L per window).
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
			est := float64(count[k-1])*float64(P-e)/float64(P) + float64(c)
			if est > float64(L)+1e-9 {
				return fmt.Sprintf("estimate %.3f at %d (window %d: prev %d, cur %d)", est, t, k, count[k-1], c)
			}
		}
	case ratelimit.TokenBucket, ratelimit.GCRA:
		// At most B + L·t/P in any closed span of length t.
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

// The checker itself catches violations (so a passing TestBounds means
// something).
func TestViolationChecker(t *testing.T) {
	t.Parallel()
	s := int64(time.Second / time.Microsecond)
	lim := func(alg ratelimit.Algorithm, burst int64) ratelimit.Limit {
		return ratelimit.Limit{Algorithm: alg, Rate: 2, Period: time.Second, Burst: burst}
	}
	cases := []struct {
		limit ratelimit.Limit
		a     []int64
		bad   bool
	}{
		{lim(ratelimit.FixedWindow, 0), []int64{10*s + 1, 10*s + 2, 11*s - 1}, true},
		{lim(ratelimit.FixedWindow, 0), []int64{11*s - 2, 11*s - 1, 11 * s, 11*s + 1}, false}, // boundary burst is allowed
		{lim(ratelimit.SlidingLog, 0), []int64{11*s - 2, 11*s - 1, 11 * s}, true},
		{lim(ratelimit.SlidingLog, 0), []int64{10 * s, 10*s + 1, 11 * s, 11*s + 1}, false},
		{lim(ratelimit.SlidingWindow, 0), []int64{10 * s, 10*s + 1, 11*s + s/4}, true}, // 2·0.75 + 1 > 2
		{lim(ratelimit.SlidingWindow, 0), []int64{10 * s, 10*s + 1, 11*s + s/2}, false},
		{lim(ratelimit.GCRA, 2), []int64{10 * s, 10 * s, 10*s + s/2 - 1}, true},
		{lim(ratelimit.GCRA, 2), []int64{10 * s, 10 * s, 10*s + s/2}, false},
		{lim(ratelimit.TokenBucket, 1), []int64{10 * s, 10*s + s/2 - 1}, true},
	}
	for i, tc := range cases {
		if got := violation(tc.limit, tc.a); (got != "") != tc.bad {
			t.Errorf("case %d (%s %v): violation %q; want violation=%v", i, tc.limit.Algorithm, tc.a, got, tc.bad)
		}
	}
}
