package lockprovidertest

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
)

// decision is one decision of the bound check, at the server time the
// limiter reported.
type decision struct {
	at      int64 // server time, µs
	allowed bool
}

// The bound check: for every algorithm at once, boundWorkers goroutines
// offer many times a limit for boundWindows periods. The limit is low (20
// a second) so that even a slow backend on a busy machine serves more than
// it admits. Decisions are
// judged by the server time each one reports (read inside the atomic
// step), never by the test's clock, so network and scheduling delays
// cannot produce false verdicts. It fails on any definite violation of the
// algorithm's bound, and when the limiter admitted less than
// minAdmittedShare of what the memory provider admits for the same
// arrivals replayed in server-time order (over-blocking). An algorithm
// whose limit never bound (the backend, on a loaded machine, served less
// than the limit) is checked again at a lower limit, up to boundAttempts
// times in all: the check must see the limit bind, at some rate.
func (e *rateEnv) testBounds() {
	const boundAttempts = 3
	algs, rate := rateAlgorithms, int64(10)
	for attempt := 1; len(algs) > 0; attempt++ {
		algs = e.bounds(algs, rate, attempt == boundAttempts)
		rate /= 3
	}
}

// bounds runs the bound check for algs at rate requests per period and
// returns the algorithms whose limit did not bind, or, when last is set,
// reports them as failures and returns none.
func (e *rateEnv) bounds(algs []batontype.Algorithm, boundRate int64, last bool) []batontype.Algorithm {
	const (
		boundWorkers     = 25
		boundPeriod      = 500 * time.Millisecond
		boundWindows     = 6
		minAdmittedShare = 0.9
	)
	type outcome struct {
		limit batontype.RateLimit
		all   []decision
		err   error
	}
	outs := make([]outcome, len(algs))
	var all sync.WaitGroup
	for i, alg := range algs {
		limit := batontype.RateLimit{Algorithm: alg, Rate: boundRate, Period: boundPeriod}
		outs[i].limit = limit
		key := e.key()
		until := time.Now().Add(boundWindows * boundPeriod)
		var mu sync.Mutex
		for w := range boundWorkers {
			all.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), uint64(alg)))
				var mine []decision
				for time.Now().Before(until) {
					res, err := e.r.RateLimit(e.ctx, lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{limit}})
					if err != nil {
						mu.Lock()
						outs[i].err = err
						mu.Unlock()
						return
					}
					mine = append(mine, decision{res.Now.UnixMicro(), res.Allowed})
					// 25 workers × one request per ~50ms: up to 25 times
					// the limit of 20 a second.
					time.Sleep(time.Duration(25+rng.IntN(50)) * time.Millisecond)
				}
				mu.Lock()
				outs[i].all = append(outs[i].all, mine...)
				mu.Unlock()
			})
		}
	}
	all.Wait()
	var unbound []batontype.Algorithm
	for _, out := range outs {
		alg := out.limit.Algorithm
		if out.err != nil {
			e.t.Errorf("%s: %v", alg, out.err)
			continue
		}
		slices.SortStableFunc(out.all, func(a, b decision) int { return int(a.at - b.at) })
		h := history.New()
		var admitted int
		for _, d := range out.all {
			h.Rate("k", out.limit, 1, d.allowed, time.UnixMicro(d.at))
			if d.allowed {
				admitted++
			}
		}
		for _, v := range history.Check(h, history.Config{}).Violations {
			e.t.Errorf("%s: bound violated: %s", alg, v)
		}
		ideal := replay(e.t, out.limit, out.all)
		e.t.Logf("%s: %d requests, %d admitted; the algorithm admits %d of the same arrivals", alg, len(out.all), admitted, ideal)
		if float64(admitted) < minAdmittedShare*float64(ideal) {
			e.t.Errorf("%s: admitted %d; want at least %.0f%% of the %d the algorithm admits (over-blocking)", alg, admitted, 100*minAdmittedShare, ideal)
		}
		// The limit must have bound (a slow backend on a busy machine may
		// serve less than the offered load, which is no failure: the
		// algorithm is checked again at a lower limit).
		if admitted == len(out.all) {
			if last {
				e.t.Errorf("%s: all %d requests admitted at %d per %v: the offered load did not reach the limit", alg, len(out.all), boundRate, boundPeriod)
				continue
			}
			e.t.Logf("%s: all %d requests admitted at %d per %v: checked again at a lower limit", alg, len(out.all), boundRate, boundPeriod)
			unbound = append(unbound, alg)
		}
	}
	return unbound
}

// replay runs the arrivals through the memory provider at their server
// times and returns how many it admits.
func replay(t testing.TB, limit batontype.RateLimit, all []decision) int {
	if len(all) == 0 {
		return 0
	}
	clk := &fakeClock{}
	ref := reference(t, clk)
	n := 0
	for _, d := range all {
		clk.Set(time.UnixMicro(d.at))
		res, err := ref.RateLimit(context.Background(), lockprovider.RateRequest{Key: "k", N: 1, Limits: []batontype.RateLimit{limit}})
		if err == nil && res.Allowed {
			n++
		}
	}
	return n
}
