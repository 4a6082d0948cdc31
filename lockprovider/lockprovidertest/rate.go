package lockprovidertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

// rateGroupCases check lockprovider.RateLimiter. Decisions are compared
// with those of the memory provider, the reference implementation, at the
// server time the limiter under test reports.
func rateGroupCases() []testCase {
	var cs []testCase
	for _, c := range rateCases() {
		cs = append(cs, testCase{c.name, func(e *env) { c.fn(e.rate()) }})
	}
	return cs
}

type rateCase struct {
	name string
	fn   func(e *rateEnv)
}

func rateCases() []rateCase {
	return []rateCase{
		{"AgreesWithMemory", (*rateEnv).testAgree},
		{"FreshKeyAdmitsCapacity", (*rateEnv).testFreshKey},
		{"PeekChargesNothing", (*rateEnv).testPeek},
		{"MultiLimitAtomic", (*rateEnv).testAtomic},
		{"KeysIndependent", (*rateEnv).testKeys},
		{"ReserveAndRefund", (*rateEnv).testReserve},
		{"Validation", (*rateEnv).testRateValidation},
		{"Context", (*rateEnv).testRateContext},
		{"NilContext", (*rateEnv).testRateNilContext},
		{"ConcurrentExact", (*rateEnv).testConcurrent},
		{"StateExpires", (*rateEnv).testExpires},
		{"Bounds", (*rateEnv).testBounds},
	}
}

// rateAlgorithms are every algorithm, in declaration order.
var rateAlgorithms = []batontype.Algorithm{
	batontype.FixedWindow, batontype.SlidingLog, batontype.SlidingWindow,
	batontype.TokenBucket, batontype.GCRA,
}

// hour is a period no subtest outlives: no window boundary or refill
// blurs what it counts.
const hour = time.Hour

// rate returns the state of a rate subtest on e's provider.
func (e *env) rate() *rateEnv {
	return &rateEnv{t: e.t, r: e.p.(lockprovider.RateLimiter), ctx: e.ctx, s: e.s}
}

// rateEnv is the state of one rate subtest.
type rateEnv struct {
	t   *testing.T
	r   lockprovider.RateLimiter
	ctx context.Context
	s   *suite
}

// key returns a key no other subtest uses.
func (e *rateEnv) key() string {
	return fmt.Sprintf("lpt-rate-%s-%d", e.s.id, e.s.seq.Add(1))
}

func (e *rateEnv) decide(req lockprovider.RateRequest) lockprovider.RateResult {
	e.t.Helper()
	res, err := e.r.RateLimit(e.ctx, req)
	if err != nil {
		e.t.Fatalf("RateLimit(key %q, n %d, %d limits): %v", req.Key, req.N, len(req.Limits), err)
	}
	if len(res.Limits) != len(req.Limits) {
		e.t.Fatalf("RateLimit returned %d limit states for %d limits", len(res.Limits), len(req.Limits))
	}
	return res
}

// remaining peeks at key and returns each limit's Remaining.
func (e *rateEnv) remaining(key string, limits []batontype.RateLimit) []int64 {
	e.t.Helper()
	res := e.decide(lockprovider.RateRequest{Key: key, Limits: limits})
	out := make([]int64, len(res.Limits))
	for i, s := range res.Limits {
		out[i] = s.Remaining
	}
	return out
}

// fakeClock is the reference provider's clock, set to the server time the
// limiter under test reported.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// reference returns a memory provider whose clock is c, failing t if it
// cannot be made.
func reference(t testing.TB, c *fakeClock) *memory.Provider {
	t.Helper()
	p, err := memory.New(&memory.Config{Now: c.Now})
	if err != nil {
		t.Fatalf("memory reference provider: %v", err)
	}
	return p
}

// Every decision, of random requests (cost, reservation, refund) on one
// and several limits, equals the memory provider's at the server time the
// limiter reported: Allowed, Delay, RetryAfter, Now and every limit's
// Remaining, RetryAfter and ResetAfter. The sequences must both admit and
// refuse, or they prove nothing.
func (e *rateEnv) testAgree() {
	limitSets := [][]batontype.RateLimit{
		{{Algorithm: batontype.FixedWindow, Rate: 5, Period: 40 * time.Millisecond}},
		{{Algorithm: batontype.SlidingLog, Rate: 6, Period: 50 * time.Millisecond}},
		{{Algorithm: batontype.SlidingWindow, Rate: 7, Period: 30 * time.Millisecond}},
		{{Algorithm: batontype.TokenBucket, Rate: 3, Period: 20 * time.Millisecond, Burst: 5}},
		{{Algorithm: batontype.GCRA, Rate: 7, Period: 30 * time.Millisecond, Burst: 4}},
		{
			{Algorithm: batontype.GCRA, Rate: 3, Period: 10 * time.Millisecond, Burst: 3},
			{Algorithm: batontype.TokenBucket, Rate: 9, Period: 70 * time.Millisecond, Burst: 6},
		},
		{
			{Algorithm: batontype.FixedWindow, Rate: 8, Period: 50 * time.Millisecond},
			{Algorithm: batontype.SlidingWindow, Rate: 5, Period: 20 * time.Millisecond},
			{Algorithm: batontype.SlidingLog, Rate: 6, Period: 30 * time.Millisecond},
			{Algorithm: batontype.GCRA, Rate: 11, Period: 30 * time.Millisecond, Burst: 5},
		},
	}
	const (
		steps       = 300
		minOutcomes = 20 // each of admitted and refused, per set
		minReserved = 5  // admitted with a delay, per reservable set
		maxScale    = 32
	)
	for si, limits := range limitSets {
		// The mix of outcomes depends on how the round trips compare with
		// the limits' periods: on a loaded machine a sequence may leave a
		// limit always refilled. Such a sequence proves nothing, so the
		// set runs again with its periods and think times doubled, until
		// it exercises the limits. Every decision of every run is checked.
		for scale := time.Duration(1); ; scale *= 2 {
			admitted, refused, delayed, reservable := e.agreeSet(si, scaled(limits, scale), scale, steps)
			if admitted >= minOutcomes && refused >= minOutcomes && (!reservable || delayed >= minReserved) {
				if scale > 1 {
					e.t.Logf("set %d exercised its limits with periods ×%d", si, scale)
				}
				break
			}
			if scale == maxScale {
				e.t.Errorf("set %d: %d admitted, %d refused, %d reserved ahead with periods ×%d: the sequence did not exercise the limits", si, admitted, refused, delayed, scale)
				break
			}
		}
	}
}

// scaled returns limits with their periods multiplied by k.
func scaled(limits []batontype.RateLimit, k time.Duration) []batontype.RateLimit {
	out := slices.Clone(limits)
	for i := range out {
		out[i].Period *= k
	}
	return out
}

// agreeSet runs steps random requests on limits against a fresh key,
// failing at the first decision that differs from the reference's, and
// counts the outcomes. Think times are scaled by scale.
func (e *rateEnv) agreeSet(si int, limits []batontype.RateLimit, scale time.Duration, steps int) (admitted, refused, delayed int, reservable bool) {
	clk := &fakeClock{}
	ref := reference(e.t, clk)
	reservable = true
	capacity := limits[0].Capacity()
	for _, l := range limits {
		reservable = reservable && l.Algorithm.Reservable()
		capacity = min(capacity, l.Capacity())
	}
	rng := rand.New(rand.NewPCG(uint64(si), 7))
	key := e.key()
	for step := range steps {
		req := lockprovider.RateRequest{Key: key, N: rng.Int64N(capacity + 1), Limits: limits}
		if reservable {
			switch rng.IntN(6) {
			case 0:
				req.MaxDelay = scale * time.Duration(rng.IntN(40_000)) * time.Microsecond
			case 1:
				req.Refund = true
			}
		}
		got := e.decide(req)
		clk.Set(got.Now)
		want, err := ref.RateLimit(e.ctx, req)
		if err != nil {
			e.t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			e.t.Fatalf("set %d step %d, request %+v:\n got %+v\nwant %+v (memory provider at the same server time)", si, step, req, got, want)
		}
		switch {
		case got.Allowed && got.Delay > 0:
			delayed++
		case got.Allowed:
			admitted++
		default:
			refused++
		}
		if rng.IntN(3) == 0 {
			time.Sleep(scale * time.Duration(rng.IntN(3000)) * time.Microsecond) // think time of the workload
		}
	}
	return admitted, refused, delayed, reservable
}

// A fresh key admits exactly the capacity, one unit at a time, counting
// Remaining down; the next unit is refused with positive RetryAfter and
// ResetAfter, and Now is the backend's clock, never going backwards.
func (e *rateEnv) testFreshKey() {
	for _, alg := range rateAlgorithms {
		limits := []batontype.RateLimit{{Algorithm: alg, Rate: 5, Period: hour}}
		key := e.key()
		var last time.Time
		for i := range 5 {
			res := e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits})
			if !res.Allowed || res.Limits[0].Remaining != int64(4-i) || res.RetryAfter != 0 || res.Delay != 0 {
				e.t.Fatalf("%s request %d: %+v; want allowed at once, remaining %d", alg, i, res, 4-i)
			}
			if res.Now.IsZero() || res.Now.Before(last) {
				e.t.Errorf("%s request %d: Now %v after %v; want the server clock, not going backwards", alg, i, res.Now, last)
			}
			last = res.Now
		}
		res := e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits})
		s := res.Limits[0]
		if res.Allowed || res.RetryAfter <= 0 || s.Remaining != 0 || s.RetryAfter <= 0 || s.ResetAfter <= 0 {
			e.t.Fatalf("%s request 6: %+v; want refused with RetryAfter and ResetAfter > 0", alg, res)
		}
	}
}

// A peek (N = 0) reports the state and charges nothing, on a fresh key and
// on a drained one.
func (e *rateEnv) testPeek() {
	for _, alg := range rateAlgorithms {
		limits := []batontype.RateLimit{{Algorithm: alg, Rate: 2, Period: hour}}
		key := e.key()
		for range 3 {
			res := e.decide(lockprovider.RateRequest{Key: key, Limits: limits})
			if s := res.Limits[0]; !res.Allowed || s.Remaining != 2 || s.ResetAfter != 0 {
				e.t.Fatalf("%s: peek on a fresh key = %+v; want allowed, remaining 2, nothing to reset", alg, res)
			}
		}
		if res := e.decide(lockprovider.RateRequest{Key: key, N: 2, Limits: limits}); !res.Allowed {
			e.t.Fatalf("%s: 2 of 2 refused after peeks: %+v", alg, res)
		}
		for range 3 {
			if res := e.decide(lockprovider.RateRequest{Key: key, Limits: limits}); res.Limits[0].Remaining != 0 || res.Limits[0].ResetAfter <= 0 {
				e.t.Fatalf("%s: peek after 2 = %+v; want remaining 0, ResetAfter > 0", alg, res)
			}
		}
	}
}

// Several limits on one key are checked and charged together: a request
// refused by one limit charges none, one admitted by all charges all.
func (e *rateEnv) testAtomic() {
	limits := []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 3, Period: batontype.MaxDuration}, // no boundary inside the test
		{Algorithm: batontype.GCRA, Rate: 10, Period: hour, Burst: 10},
		{Algorithm: batontype.SlidingLog, Rate: 5, Period: hour},
		{Algorithm: batontype.TokenBucket, Rate: 10, Period: hour, Burst: 6},
		{Algorithm: batontype.SlidingWindow, Rate: 4, Period: hour},
	}
	key := e.key()
	for i := range 3 {
		if res := e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits}); !res.Allowed {
			e.t.Fatalf("request %d refused: %+v", i, res)
		}
	}
	for range 4 {
		res := e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits})
		if res.Allowed || res.Limits[0].RetryAfter <= 0 {
			e.t.Fatalf("%+v; want refused by the fixed window (first limit)", res)
		}
		for i, s := range res.Limits[1:] {
			if s.RetryAfter != 0 {
				e.t.Errorf("limit %d reports RetryAfter %v; want 0 (it admits the request)", i+1, s.RetryAfter)
			}
		}
	}
	// n=3 fits the gcra, log and bucket but not the fixed or sliding
	// window: still nothing charged anywhere.
	if res := e.decide(lockprovider.RateRequest{Key: key, N: 3, Limits: limits}); res.Allowed {
		e.t.Fatalf("n=3: %+v; want refused", res)
	}
	if got, want := e.remaining(key, limits), []int64{0, 7, 2, 3, 1}; !reflect.DeepEqual(got, want) {
		e.t.Errorf("remaining %v; want %v (only the 3 admitted requests charged)", got, want)
	}
}

// Keys are independent, including keys whose characters mean something to
// a backend's key syntax (hash tags, escapes, separators, SQL quotes).
func (e *rateEnv) testKeys() {
	base := e.key()
	keys := []string{base, base + "}", base + "%7D", base + "%", base + "{x}", base + ":g3600000000",
		base + "'; DROP TABLE x; --", base + " ключ ✓", strings.Repeat("k", batontype.MaxNameLen-len(base)) + base}
	limits := []batontype.RateLimit{{Algorithm: batontype.GCRA, Rate: 3, Period: hour}}
	for i, k := range keys {
		if res := e.decide(lockprovider.RateRequest{Key: k, N: 3, Limits: limits}); !res.Allowed {
			e.t.Fatalf("key %d %q: full capacity refused (its state is shared with an earlier key?): %+v", i, k, res)
		}
		for _, k2 := range keys[i+1:] {
			if r := e.remaining(k2, limits); r[0] != 3 {
				e.t.Fatalf("after draining %q, key %q has %d remaining; want 3 (keys must not share state)", k, k2, r[0])
			}
		}
	}
	// Limits differing only in algorithm or period have their own state
	// under one key.
	key := e.key()
	a := batontype.RateLimit{Algorithm: batontype.GCRA, Rate: 2, Period: hour}
	b := batontype.RateLimit{Algorithm: batontype.TokenBucket, Rate: 2, Period: hour}
	c := batontype.RateLimit{Algorithm: batontype.GCRA, Rate: 2, Period: 2 * hour}
	e.decide(lockprovider.RateRequest{Key: key, N: 2, Limits: []batontype.RateLimit{a}})
	if r := e.remaining(key, []batontype.RateLimit{b, c}); r[0] != 2 || r[1] != 2 {
		e.t.Errorf("limits with another algorithm or period have %v remaining; want [2 2]", r)
	}
}

// TokenBucket and GCRA reserve: with MaxDelay a request is admitted if it
// can pass within it, and Delay says when; a reservation beyond MaxDelay
// is refused and books nothing; a refund gives units back, never above
// the capacity.
func (e *rateEnv) testReserve() {
	// The server clock moves during the test; durations are compared with
	// this much slack.
	const slack = 10 * time.Second
	for _, alg := range []batontype.Algorithm{batontype.TokenBucket, batontype.GCRA} {
		limits := []batontype.RateLimit{{Algorithm: alg, Rate: 1, Period: hour, Burst: 1}}
		key := e.key()
		e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits})
		res := e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits, MaxDelay: 2 * hour})
		if !res.Allowed || res.Delay < hour-slack || res.Delay > hour {
			e.t.Fatalf("%s: reservation within 2h: %+v; want allowed with Delay about 1h", alg, res)
		}
		queued := res.Limits[0].ResetAfter
		res = e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits, MaxDelay: 90 * time.Minute})
		if res.Allowed || res.RetryAfter <= 0 {
			e.t.Fatalf("%s: reservation 2h ahead with MaxDelay 90m: %+v; want refused", alg, res)
		}
		if q := e.decide(lockprovider.RateRequest{Key: key, Limits: limits}).Limits[0].ResetAfter; q > queued {
			e.t.Errorf("%s: queue reaches %v after a refused reservation; want at most %v (nothing booked)", alg, q, queued)
		}
		res = e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits, Refund: true})
		if !res.Allowed {
			e.t.Fatalf("%s: refund refused: %+v", alg, res)
		}
		if q := res.Limits[0].ResetAfter; q > hour || q < hour-slack {
			e.t.Errorf("%s: queue reaches %v after refunding the reservation; want about 1h", alg, q)
		}
		// Refunds beyond what was charged stop at the capacity.
		for range 3 {
			e.decide(lockprovider.RateRequest{Key: key, N: 1, Limits: limits, Refund: true})
		}
		if r := e.remaining(key, limits); r[0] != 1 {
			e.t.Errorf("%s: %d remaining after surplus refunds; want the capacity 1", alg, r[0])
		}
	}
}

// Every rule of lockprovider.RateRequest.Validate holds: a bad request
// returns a *batontype.ValidationError matching the rule's sentinel and
// ErrInvalid, and charges nothing.
func (e *rateEnv) testRateValidation() {
	key := e.key()
	good := batontype.RateLimit{Algorithm: batontype.GCRA, Rate: 10, Period: hour}
	window := batontype.RateLimit{Algorithm: batontype.FixedWindow, Rate: 10, Period: hour}
	one := []batontype.RateLimit{good}
	tooMany := make([]batontype.RateLimit, batontype.MaxRateLimits+1)
	for i := range tooMany {
		tooMany[i] = batontype.RateLimit{Algorithm: batontype.GCRA, Rate: 1, Period: time.Duration(i+1) * time.Second}
	}
	limit := func(mod func(*batontype.RateLimit)) []batontype.RateLimit {
		l := good
		mod(&l)
		return []batontype.RateLimit{l}
	}
	cases := []struct {
		name string
		req  lockprovider.RateRequest
		want error
	}{
		{"empty key", lockprovider.RateRequest{N: 1, Limits: one}, batontype.ErrInvalidName},
		{"long key", lockprovider.RateRequest{Key: strings.Repeat("k", batontype.MaxNameLen+1), N: 1, Limits: one}, batontype.ErrInvalidName},
		{"control character", lockprovider.RateRequest{Key: key + "\x00", N: 1, Limits: one}, batontype.ErrInvalidName},
		{"invalid UTF-8", lockprovider.RateRequest{Key: key + "\xff", N: 1, Limits: one}, batontype.ErrInvalidName},
		{"no limits", lockprovider.RateRequest{Key: key, N: 1}, batontype.ErrInvalidLimit},
		{"too many limits", lockprovider.RateRequest{Key: key, N: 1, Limits: tooMany}, batontype.ErrInvalidLimit},
		{"negative cost", lockprovider.RateRequest{Key: key, N: -1, Limits: one}, batontype.ErrInvalidCost},
		{"cost above capacity", lockprovider.RateRequest{Key: key, N: 11, Limits: one}, batontype.ErrExceedsCapacity},
		{"negative MaxDelay", lockprovider.RateRequest{Key: key, N: 1, Limits: one, MaxDelay: -time.Second}, batontype.ErrInvalidDuration},
		{"reserve on a window", lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{window}, MaxDelay: time.Second}, batontype.ErrNotReservable},
		{"refund on a window", lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{good, window}, Refund: true}, batontype.ErrNotReservable},
		{"duplicate limits", lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{good, good}}, batontype.ErrInvalidLimit},
		{"unknown algorithm", lockprovider.RateRequest{Key: key, N: 1, Limits: limit(func(l *batontype.RateLimit) { l.Algorithm = 0 })}, batontype.ErrInvalidLimit},
		{"zero rate", lockprovider.RateRequest{Key: key, N: 1, Limits: limit(func(l *batontype.RateLimit) { l.Rate = 0 })}, batontype.ErrInvalidLimit},
		{"zero period", lockprovider.RateRequest{Key: key, N: 1, Limits: limit(func(l *batontype.RateLimit) { l.Period = 0 })}, batontype.ErrInvalidLimit},
		{"sub-microsecond period", lockprovider.RateRequest{Key: key, N: 1, Limits: limit(func(l *batontype.RateLimit) { l.Period = time.Second + 1 })}, batontype.ErrInvalidLimit},
		{"over one per microsecond", lockprovider.RateRequest{Key: key, N: 1, Limits: limit(func(l *batontype.RateLimit) { l.Rate, l.Period = 2000, time.Millisecond })}, batontype.ErrInvalidLimit},
		{"negative burst", lockprovider.RateRequest{Key: key, N: 1, Limits: limit(func(l *batontype.RateLimit) { l.Burst = -1 })}, batontype.ErrInvalidLimit},
		{"burst on a window", lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{{Algorithm: batontype.SlidingWindow, Rate: 1, Period: hour, Burst: 2}}}, batontype.ErrInvalidLimit},
		{"huge log", lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{{Algorithm: batontype.SlidingLog, Rate: batontype.MaxLogLimit + 1, Period: hour}}}, batontype.ErrInvalidLimit},
		{"inexact bucket", lockprovider.RateRequest{Key: key, N: 1, Limits: []batontype.RateLimit{{Algorithm: batontype.TokenBucket, Rate: 1_000_003, Period: 24 * hour}}}, batontype.ErrInvalidLimit},
	}
	for _, c := range cases {
		_, err := e.r.RateLimit(e.ctx, c.req)
		var ve *batontype.ValidationError
		if !errors.Is(err, c.want) || !errors.Is(err, batontype.ErrInvalid) || !errors.As(err, &ve) {
			e.t.Errorf("%s: error %v; want a *batontype.ValidationError matching %v", c.name, err, c.want)
		}
	}
	if r := e.remaining(key, []batontype.RateLimit{good, window}); r[0] != 10 || r[1] != 10 {
		e.t.Errorf("remaining %v after invalid requests; want [10 10] (nothing charged)", r)
	}
}

// A done context fails the decision with the context's error and charges
// nothing.
func (e *rateEnv) testRateContext() {
	limits := []batontype.RateLimit{{Algorithm: batontype.FixedWindow, Rate: 3, Period: hour}}
	key := e.key()
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	dctx, dcancel := context.WithDeadline(e.ctx, time.Now().Add(-time.Second))
	defer dcancel()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{ctx, context.Canceled}, {dctx, context.DeadlineExceeded}} {
		_, err := e.r.RateLimit(c.ctx, lockprovider.RateRequest{Key: key, N: 1, Limits: limits})
		if !errors.Is(err, c.want) {
			e.t.Errorf("RateLimit with a done context: %v; want an error matching %v", err, c.want)
		}
	}
	if r := e.remaining(key, limits); r[0] != 3 {
		e.t.Errorf("remaining %d after decisions with a done context; want 3 (nothing charged)", r[0])
	}
}

// Concurrent requests on one key are decided one at a time: across many
// goroutines exactly the capacity is admitted, for every algorithm.
func (e *rateEnv) testConcurrent() {
	const (
		workers  = 16
		each     = 8
		capacity = 37 // fewer than workers × each, and no divisor of either
	)
	for _, alg := range rateAlgorithms {
		limits := []batontype.RateLimit{{Algorithm: alg, Rate: capacity, Period: hour}}
		key := e.key()
		var admitted atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				for range each {
					res, err := e.r.RateLimit(e.ctx, lockprovider.RateRequest{Key: key, N: 1, Limits: limits})
					if err != nil {
						errs <- err
						return
					}
					if res.Allowed {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			e.t.Fatalf("%s: %v", alg, err)
		}
		if n := admitted.Load(); n != capacity {
			e.t.Errorf("%s: %d of %d concurrent requests admitted; want exactly the capacity %d", alg, n, workers*each, capacity)
		}
	}
}

// State stops affecting decisions once its limit is full again: a drained
// key is back to full capacity after ResetAfter.
func (e *rateEnv) testExpires() {
	const period = 50 * time.Millisecond
	for _, alg := range rateAlgorithms {
		limits := []batontype.RateLimit{{Algorithm: alg, Rate: 4, Period: period}}
		key := e.key()
		res := e.decide(lockprovider.RateRequest{Key: key, N: 4, Limits: limits})
		if !res.Allowed || res.Limits[0].ResetAfter <= 0 || res.Limits[0].ResetAfter > 2*period {
			e.t.Fatalf("%s: draining a fresh key: %+v; want allowed with 0 < ResetAfter ≤ %v", alg, res, 2*period)
		}
		time.Sleep(res.Limits[0].ResetAfter) // the documented ResetAfter; then poll for the state's expiry
		deadline := time.Now().Add(waitLimit)
		for {
			peek := e.decide(lockprovider.RateRequest{Key: key, Limits: limits})
			if peek.Limits[0].Remaining == 4 && peek.Limits[0].ResetAfter == 0 {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("%s: %+v %v after ResetAfter; want full capacity again", alg, peek, waitLimit)
			}
			time.Sleep(pollEvery) // poll interval of a deadline-bounded wait
		}
	}
}
