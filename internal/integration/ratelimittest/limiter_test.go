package ratelimittest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/ratelimit"
)

func mustNew(t *testing.T, provider lockprovider.RateLimiter, limits ...ratelimit.Limit) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(provider, limits, nil)
	if err != nil {
		t.Fatalf("New(%+v): %v", limits, err)
	}
	return l
}

func allow(t *testing.T, l *ratelimit.Limiter, key string, n int64) ratelimit.Result {
	t.Helper()
	res, err := l.AllowN(context.Background(), key, n)
	if err != nil {
		t.Fatalf("AllowN(%q, %d): %v", key, n, err)
	}
	return res
}

var allAlgorithms = []ratelimit.Algorithm{ratelimit.FixedWindow, ratelimit.SlidingLog, ratelimit.SlidingWindow, ratelimit.TokenBucket, ratelimit.GCRA}

// A fresh key admits exactly the capacity, counting down Remaining, then
// refuses with a positive RetryAfter.
func TestFreshKeyAdmitsCapacity(t *testing.T) {
	t.Parallel()
	for _, alg := range allAlgorithms {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock(epoch.Add(time.Minute))
			l := mustNew(t, memoryAt(t, clk), ratelimit.Limit{Algorithm: alg, Rate: 5, Period: time.Hour})
			for i := range 5 {
				res := allow(t, l, "k", 1)
				if !res.Allowed || res.Remaining != int64(4-i) || res.RetryAfter != 0 {
					t.Fatalf("request %d: %+v; want allowed, remaining %d", i, res, 4-i)
				}
			}
			res := allow(t, l, "k", 1)
			if res.Allowed || res.Remaining != 0 || res.RetryAfter <= 0 || res.ResetAfter <= 0 {
				t.Fatalf("request 6: %+v; want refused with RetryAfter > 0", res)
			}
			if !res.ServerTime.Equal(clk.Now()) {
				t.Errorf("ServerTime = %v; want the provider's clock %v", res.ServerTime, clk.Now())
			}
		})
	}
}

func TestRetryAfterIsExact(t *testing.T) {
	t.Parallel()
	type step struct {
		advance time.Duration
		n       int64
		allowed bool
		retry   time.Duration // when refused
	}
	cases := []struct {
		name  string
		limit ratelimit.Limit
		steps []step
	}{
		{"fixed window waits for the next window", ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 2, Period: time.Second}, []step{
			{250 * time.Millisecond, 2, true, 0},
			{0, 1, false, 750 * time.Millisecond},
			{750 * time.Millisecond, 2, true, 0},
		}},
		{"sliding log waits for the oldest entries to leave", ratelimit.Limit{Algorithm: ratelimit.SlidingLog, Rate: 3, Period: time.Second}, []step{
			{0, 1, true, 0},
			{100 * time.Millisecond, 2, true, 0},
			{100 * time.Millisecond, 2, false, 900 * time.Millisecond},
			{800 * time.Millisecond, 2, false, 100 * time.Millisecond},
			{100 * time.Millisecond, 2, true, 0}, // the two at +100ms left at +1.1s
			{0, 2, false, time.Second},
		}},
		{"sliding window weights the previous window", ratelimit.Limit{Algorithm: ratelimit.SlidingWindow, Rate: 10, Period: time.Second}, []step{
			{0, 10, true, 0},
			// 25% into the next window the estimate is 10·0.75 = 7.5.
			{1250 * time.Millisecond, 2, true, 0},
			// 7.5 + 2 + 1 > 10: wait until 10·(1−e) ≤ 7, e = 0.3.
			{0, 1, false, 50 * time.Millisecond},
			{50 * time.Millisecond, 1, true, 0},
		}},
		{"token bucket refills continuously", ratelimit.Limit{Algorithm: ratelimit.TokenBucket, Rate: 4, Period: time.Second, Burst: 2}, []step{
			{0, 2, true, 0},
			{0, 1, false, 250 * time.Millisecond},
			{100 * time.Millisecond, 1, false, 150 * time.Millisecond},
			{150 * time.Millisecond, 1, true, 0},
			{0, 2, false, 500 * time.Millisecond},
		}},
		{"gcra emits at the interval", ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 4, Period: time.Second, Burst: 2}, []step{
			{0, 2, true, 0},
			{0, 1, false, 250 * time.Millisecond},
			{100 * time.Millisecond, 1, false, 150 * time.Millisecond},
			{150 * time.Millisecond, 1, true, 0},
			{0, 2, false, 500 * time.Millisecond},
		}},
		{"a third per second has no drift (gcra)", ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 3, Period: time.Second, Burst: 1}, []step{
			{0, 1, true, 0},
			{0, 1, false, 333334 * time.Microsecond},
			{333333 * time.Microsecond, 1, false, time.Microsecond},
			{time.Microsecond, 1, true, 0},
		}},
		{"a third per second has no drift (token bucket)", ratelimit.Limit{Algorithm: ratelimit.TokenBucket, Rate: 3, Period: time.Second, Burst: 1}, []step{
			{0, 1, true, 0},
			{0, 1, false, 333334 * time.Microsecond},
			{333333 * time.Microsecond, 1, false, time.Microsecond},
			{time.Microsecond, 1, true, 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock(epoch)
			l := mustNew(t, memoryAt(t, clk), tc.limit)
			for i, s := range tc.steps {
				clk.Advance(s.advance)
				res := allow(t, l, "k", s.n)
				if res.Allowed != s.allowed || (!s.allowed && res.RetryAfter != s.retry) {
					t.Fatalf("step %d (n=%d at +%v): allowed=%v retry=%v; want allowed=%v retry=%v", i, s.n, clk.Now().Sub(epoch), res.Allowed, res.RetryAfter, s.allowed, s.retry)
				}
			}
		})
	}
}

// Over many events at a rate that is not a whole number of microseconds per
// event, the bucket algorithms admit exactly Rate per Period: no rounding
// accumulates.
func TestNoDrift(t *testing.T) {
	t.Parallel()
	for _, alg := range []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.GCRA} {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock(epoch)
			l := mustNew(t, memoryAt(t, clk), ratelimit.Limit{Algorithm: alg, Rate: 7, Period: time.Second, Burst: 7})
			admitted := 0
			// Drain the bucket, then once a second for 1000 s take all it
			// refilled. A rounded emission interval (142858µs instead of
			// 142857.14…) would refill only 6 in some seconds.
			for i := 0; i <= 1000; i++ {
				for allow(t, l, "k", 1).Allowed {
					admitted++
				}
				clk.Advance(time.Second)
			}
			if want := 7 + 7*1000; admitted != want {
				t.Fatalf("admitted %d in 1000 s; want exactly %d", admitted, want)
			}
		})
	}
}

// The fixed window's known weakness: up to twice the rate in a short span
// across a window boundary.
func TestFixedWindowBoundaryBurst(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(epoch.Add(time.Minute - time.Millisecond))
	l := mustNew(t, memoryAt(t, clk), ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 100, Period: time.Minute})
	passed := 0
	for range 200 {
		if allow(t, l, "k", 1).Allowed {
			passed++
		}
	}
	clk.Advance(2 * time.Millisecond) // into the next window
	for range 200 {
		if allow(t, l, "k", 1).Allowed {
			passed++
		}
	}
	if passed != 200 {
		t.Fatalf("%d passed within 2ms across the boundary; want 200 (2× the rate, the documented boundary burst)", passed)
	}
	// A sliding log with the same limit does not allow it.
	clk2 := newFakeClock(epoch.Add(time.Minute - time.Millisecond))
	sl := mustNew(t, memoryAt(t, clk2), ratelimit.Limit{Algorithm: ratelimit.SlidingLog, Rate: 100, Period: time.Minute})
	passed = 0
	for range 200 {
		if allow(t, sl, "k", 1).Allowed {
			passed++
		}
	}
	clk2.Advance(2 * time.Millisecond)
	for range 200 {
		if allow(t, sl, "k", 1).Allowed {
			passed++
		}
	}
	if passed != 100 {
		t.Fatalf("sliding log passed %d; want 100", passed)
	}
}

// A request refused by one limit charges none of the others.
func TestMultiLimitAtomic(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(epoch.Add(time.Second))
	l := mustNew(t, memoryAt(t, clk),
		ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 3, Period: time.Hour, Name: "hourly"},
		ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 10, Period: time.Second, Burst: 10, Name: "burst"},
		ratelimit.Limit{Algorithm: ratelimit.SlidingLog, Rate: 5, Period: time.Minute, Name: "minute"},
	)
	for range 3 {
		if !allow(t, l, "k", 1).Allowed {
			t.Fatal("refused within every limit")
		}
	}
	for range 5 {
		res := allow(t, l, "k", 1)
		if res.Allowed || res.Limit.Name != "hourly" {
			t.Fatalf("%+v; want refused by the hourly limit", res)
		}
	}
	peek := allow(t, l, "k", 0)
	want := []int64{0, 7, 2}
	for i, s := range peek.States {
		if s.Remaining != want[i] {
			t.Errorf("%s remaining %d; want %d (refusals charged nothing)", s.Limit.Name, s.Remaining, want[i])
		}
	}
	// A cost the GCRA can take but the log cannot is refused whole.
	clk.Advance(time.Hour)
	if res := allow(t, l, "k", 3); !res.Allowed {
		t.Fatalf("n=3 in a new hour refused: %+v", res)
	}
	if res := allow(t, l, "k", 3); res.Allowed || res.Limit.Name != "hourly" {
		t.Fatalf("n=3 over the hourly limit: %+v", res)
	}
	peek = allow(t, l, "k", 0)
	if got := []int64{peek.States[0].Remaining, peek.States[1].Remaining, peek.States[2].Remaining}; got[0] != 0 || got[1] != 7 || got[2] != 2 {
		t.Errorf("remaining %v after a refused n=3; want [0 7 2]", got)
	}
}

func TestPeekChargesNothing(t *testing.T) {
	t.Parallel()
	for _, alg := range allAlgorithms {
		clk := newFakeClock(epoch)
		l := mustNew(t, memoryAt(t, clk), ratelimit.Limit{Algorithm: alg, Rate: 2, Period: time.Hour})
		for range 5 {
			if res := allow(t, l, "k", 0); !res.Allowed || res.Remaining != 2 || res.ResetAfter != 0 {
				t.Fatalf("%s: peek on a fresh key = %+v", alg, res)
			}
		}
		allow(t, l, "k", 2)
		if res := allow(t, l, "k", 0); res.Remaining != 0 || res.ResetAfter <= 0 {
			t.Fatalf("%s: peek after 2 = %+v", alg, res)
		}
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	provider := memoryAt(t, newFakeClock(epoch))
	good := ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 10, Period: time.Second}
	newCases := []struct {
		name   string
		limits []ratelimit.Limit
		want   error
	}{
		{"no limits", nil, batontype.ErrInvalidLimit},
		{"zero rate", []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Period: time.Second}}, batontype.ErrInvalidLimit},
		{"negative rate", []ratelimit.Limit{{Algorithm: ratelimit.FixedWindow, Rate: -1, Period: time.Second}}, batontype.ErrInvalidLimit},
		{"zero period", []ratelimit.Limit{{Algorithm: ratelimit.FixedWindow, Rate: 1}}, batontype.ErrInvalidLimit},
		{"negative period", []ratelimit.Limit{{Algorithm: ratelimit.SlidingLog, Rate: 1, Period: -time.Second}}, batontype.ErrInvalidLimit},
		{"sub-microsecond period", []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Second + 1}}, batontype.ErrInvalidLimit},
		{"unknown algorithm", []ratelimit.Limit{{Rate: 1, Period: time.Second}}, batontype.ErrInvalidLimit},
		{"burst on a window", []ratelimit.Limit{{Algorithm: ratelimit.FixedWindow, Rate: 1, Period: time.Second, Burst: 5}}, batontype.ErrInvalidLimit},
		{"negative burst", []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Second, Burst: -1}}, batontype.ErrInvalidLimit},
		{"over one per µs", []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 2000, Period: time.Millisecond}}, batontype.ErrInvalidLimit},
		{"huge log", []ratelimit.Limit{{Algorithm: ratelimit.SlidingLog, Rate: 1_000_000, Period: time.Hour}}, batontype.ErrInvalidLimit},
		{"inexact bucket", []ratelimit.Limit{{Algorithm: ratelimit.TokenBucket, Rate: 1_000_003, Period: 24 * time.Hour}}, batontype.ErrInvalidLimit},
		{"duplicate", []ratelimit.Limit{good, good}, batontype.ErrInvalidLimit},
		{"bad name", []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Second, Name: "a\nb"}}, batontype.ErrInvalidLimit},
	}
	for _, tc := range newCases {
		_, err := ratelimit.New(provider, tc.limits, nil)
		var ve *batontype.ValidationError
		if !errors.Is(err, tc.want) || !errors.Is(err, ratelimit.ErrInvalid) || !errors.As(err, &ve) {
			t.Errorf("New(%s) = %v; want a *ValidationError matching %v", tc.name, err, tc.want)
		}
	}
	if _, err := ratelimit.New(nil, []ratelimit.Limit{good}, nil); !errors.Is(err, ratelimit.ErrInvalid) {
		t.Errorf("New(nil provider) = %v; want ErrInvalid", err)
	}
	l := mustNew(t, provider, good)
	ctx := context.Background()
	callCases := []struct {
		name string
		key  string
		n    int64
		want error
	}{
		{"empty key", "", 1, batontype.ErrInvalidName},
		{"long key", string(make([]byte, 201)), 1, batontype.ErrInvalidName},
		{"control key", "a\x00b", 1, batontype.ErrInvalidName},
		{"negative cost", "k", -1, batontype.ErrInvalidCost},
		{"cost above capacity", "k", 11, ratelimit.ErrExceedsCapacity},
	}
	for _, tc := range callCases {
		if _, err := l.AllowN(ctx, tc.key, tc.n); !errors.Is(err, tc.want) {
			t.Errorf("AllowN(%s) = %v; want %v", tc.name, err, tc.want)
		}
	}
	if err := l.WaitN(ctx, "k", 11); !errors.Is(err, ratelimit.ErrExceedsCapacity) {
		t.Errorf("WaitN(cost above capacity) = %v; want ErrExceedsCapacity", err)
	}
	// A request right at capacity is fine.
	if res := allow(t, l, "k", 10); !res.Allowed {
		t.Errorf("AllowN(capacity) refused: %+v", res)
	}
}

func TestWaitReservesInOrder(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(epoch)
	l := mustNew(t, memoryAt(t, clk), ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 20, Period: time.Second, Burst: 1})
	ctx := context.Background()
	start := time.Now()
	for range 3 {
		if err := l.Wait(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	// The provider's clock stands still, so the slots are at 0, 50 and 100ms
	// from the first: Wait slept for each reservation's delay.
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("three waits at 20/s took %v; want at least 100ms", el)
	}
	// The queue now reaches 150ms ahead (provider time); a deadline before the
	// next slot fails at once and books nothing.
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	// (A Wait that slept would end with the context's own error instead.)
	if err := l.Wait(dctx, "k"); !errors.Is(err, ratelimit.ErrWouldExceedDeadline) {
		t.Fatalf("Wait with a short deadline = %v; want ErrWouldExceedDeadline", err)
	}
	before := allow(t, l, "k", 0).ResetAfter
	// Cancelling during the sleep gives the slot back.
	cctx, cancel2 := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel2() }()
	if err := l.Wait(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Wait = %v; want context.Canceled", err)
	}
	if after := allow(t, l, "k", 0).ResetAfter; after != before {
		t.Errorf("queue reaches %v after a cancelled Wait; want %v as before (refunded)", after, before)
	}
}

func TestWaitPollsWindows(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(epoch)
	provider := memoryAt(t, clk)
	l := mustNew(t, provider, ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 1, Period: time.Second})
	ctx := context.Background()
	if err := l.Wait(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	// Refused until the provider's clock reaches the next window.
	done := make(chan error, 1)
	go func() { done <- l.Wait(ctx, "k") }()
	time.Sleep(20 * time.Millisecond)
	clk.Advance(time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the window passed")
	}
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := l.Wait(dctx, "k"); !errors.Is(err, ratelimit.ErrWouldExceedDeadline) {
		t.Fatalf("Wait past the deadline = %v; want ErrWouldExceedDeadline", err)
	}
}

// On every provider, a request refused by one limit charges none of the
// others, and requests admitted by all charge all.
func TestMultiLimitAtomicProviders(t *testing.T) {
	t.Parallel()
	for _, sc := range providers {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			l := mustNew(t, sc.new(t),
				// A window of 366 days: no boundary falls inside the test.
				ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 3, Period: 366 * 24 * time.Hour, Name: "quota"},
				ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 10, Period: time.Hour, Burst: 10, Name: "gcra"},
				ratelimit.Limit{Algorithm: ratelimit.SlidingLog, Rate: 5, Period: time.Hour, Name: "log"},
				ratelimit.Limit{Algorithm: ratelimit.TokenBucket, Rate: 10, Period: time.Hour, Burst: 6, Name: "bucket"},
				ratelimit.Limit{Algorithm: ratelimit.SlidingWindow, Rate: 4, Period: time.Hour, Name: "window"},
			)
			key := "atomic-" + testenv.Unique()
			for i := range 3 {
				if res := allow(t, l, key, 1); !res.Allowed {
					t.Fatalf("request %d refused: %+v", i, res)
				}
			}
			for range 4 {
				if res := allow(t, l, key, 1); res.Allowed || res.Limit.Name != "quota" {
					t.Fatalf("%+v; want refused by quota", res)
				}
			}
			// n=3 fits the gcra, log and bucket but not quota or window:
			// still nothing charged anywhere.
			if res := allow(t, l, key, 3); res.Allowed {
				t.Fatalf("n=3: %+v", res)
			}
			peek := allow(t, l, key, 0)
			want := map[string]int64{"quota": 0, "gcra": 7, "log": 2, "bucket": 3, "window": 1}
			for _, s := range peek.States {
				if s.Remaining != want[s.Limit.Name] {
					t.Errorf("%s remaining %d; want %d (only the 3 admitted requests charged)", s.Limit.Name, s.Remaining, want[s.Limit.Name])
				}
			}
		})
	}
}

// cancelInFlight cancels the caller's context once a booking has been
// made and before its answer is read, as a cancellation arriving while the
// reply is on the wire would; the driver then reports the context's error
// whatever the server did, as database/sql drivers do.
type cancelInFlight struct {
	lockprovider.RateLimiter
	cancel context.CancelFunc
}

func (c cancelInFlight) RateLimit(ctx context.Context, r lockprovider.RateRequest) (lockprovider.RateResult, error) {
	res, err := c.RateLimiter.RateLimit(ctx, r)
	if r.Refund {
		return res, err
	}
	c.cancel()
	if ctx.Err() != nil {
		return lockprovider.RateResult{}, ctx.Err()
	}
	return res, err
}

// A Wait cancelled while its booking is in flight gives the booked slot
// back: the booking is not cut off mid-way, so its outcome is known.
func TestWaitCancelledInFlight(t *testing.T) {
	t.Parallel()
	mem := memoryAt(t, newFakeClock(epoch))
	lim := ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Hour, Burst: 1}
	plain := mustNew(t, mem, lim)
	allow(t, plain, "k", 1) // the next slot is an hour away
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := mustNew(t, cancelInFlight{RateLimiter: mem, cancel: cancel}, lim)
	if err := l.Wait(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait cancelled in flight: %v; want context.Canceled", err)
	}
	if q := allow(t, plain, "k", 0).ResetAfter; q != time.Hour {
		t.Errorf("queue reaches %v after the cancelled Wait; want the hour booked before, its slot given back", q)
	}
}

// hung never answers: it returns only when its context ends.
type hung struct {
	lockprovider.RateLimiter
	called chan struct{}
}

func (h hung) RateLimit(ctx context.Context, _ lockprovider.RateRequest) (lockprovider.RateResult, error) {
	h.called <- struct{}{}
	<-ctx.Done()
	return lockprovider.RateResult{}, ctx.Err()
}

// The grace a booking in flight gets after a cancellation is bounded: a
// Wait on a provider that never answers still returns once cancelled.
func TestWaitCancelledHungProvider(t *testing.T) {
	t.Parallel()
	h := hung{RateLimiter: memoryAt(t, newFakeClock(epoch)), called: make(chan struct{}, 1)}
	l := mustNew(t, h, ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Hour, Burst: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Wait(ctx, "k") }()
	<-h.called
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait on a hung provider, cancelled: %v; want context.Canceled", err)
		}
	case <-time.After(time.Minute): // the grace is one second; a minute is no race
		t.Fatal("Wait on a hung provider did not return after its context was cancelled")
	}
}

// Wait on every provider: concurrent waiters get successive slots (never
// early), a deadline before the next slot fails at once without booking,
// and a cancelled wait gives its slot back.
func TestWaitProviders(t *testing.T) {
	t.Parallel()
	for _, sc := range providers {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			provider := sc.new(t)
			l := mustNew(t, provider, ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 20, Period: time.Second, Burst: 1})
			key := "wait-" + testenv.Unique()
			ctx := context.Background()
			start := time.Now()
			errs := make(chan error, 6)
			for range 6 {
				go func() { errs <- l.Wait(ctx, key) }()
			}
			for range 6 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			// Slots 0, 50, …, 250ms: the last waiter cannot be done sooner.
			if el := time.Since(start); el < 250*time.Millisecond {
				t.Errorf("6 waiters at 20/s done in %v; want at least 250ms", el)
			}

			// One per hour: after one request the next slot is an hour
			// away, so the server time that passes during the test does not
			// blur what was booked.
			slow := mustNew(t, provider, ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Hour, Burst: 1})
			allow(t, slow, key, 1)
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			err := slow.Wait(dctx, key)
			cancel()
			if !errors.Is(err, ratelimit.ErrWouldExceedDeadline) {
				t.Fatalf("Wait with a 1s deadline for a slot an hour away: %v", err)
			}
			if q := allow(t, slow, key, 0).ResetAfter; q > time.Hour {
				t.Errorf("queue reaches %v after a refused Wait; want at most the hour booked before", q)
			}
			// A cancelled waiter's slot is given back.
			cctx, cancel2 := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- slow.Wait(cctx, key) }()
			for deadline := time.Now().Add(10 * time.Second); allow(t, slow, key, 0).ResetAfter < 90*time.Minute; {
				if time.Now().After(deadline) {
					t.Fatal("the waiter did not book its slot")
				}
				time.Sleep(5 * time.Millisecond)
			}
			cancel2()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled Wait: %v", err)
			}
			if q := allow(t, slow, key, 0).ResetAfter; q > time.Hour {
				t.Errorf("queue reaches %v after the cancelled Wait; want its slot given back (at most an hour)", q)
			}
		})
	}
}

// A deadline further away than the longest reservation (366 days) is
// fine.
func TestWaitFarDeadline(t *testing.T) {
	t.Parallel()
	l := mustNew(t, memoryAt(t, newFakeClock(epoch)), ratelimit.PerSecond(5))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(1000*24*time.Hour))
	defer cancel()
	if err := l.Wait(ctx, "k"); err != nil {
		t.Fatal(err)
	}
}

// Nil and zero values return typed errors instead of panicking: a nil or
// typed-nil provider, a zero or nil Limiter, a nil context; the middleware
// with a nil Limiter fails by its fail policy.
func TestNilAndZeroValues(t *testing.T) {
	t.Parallel()
	var typedNil *memory.Provider
	if _, err := ratelimit.New(typedNil, []ratelimit.Limit{ratelimit.PerSecond(1)}, nil); !errors.Is(err, ratelimit.ErrNilProvider) || !errors.Is(err, ratelimit.ErrInvalid) {
		t.Errorf("New(typed nil) = %v; want ErrNilProvider", err)
	}
	ctx := context.Background()
	var zero ratelimit.Limiter
	var nilLimiter *ratelimit.Limiter
	for name, l := range map[string]*ratelimit.Limiter{"zero": &zero, "nil": nilLimiter} {
		if _, err := l.Allow(ctx, "k"); !errors.Is(err, ratelimit.ErrNilProvider) {
			t.Errorf("%s Limiter: Allow = %v; want ErrNilProvider", name, err)
		}
		if err := l.Wait(ctx, "k"); !errors.Is(err, ratelimit.ErrNilProvider) {
			t.Errorf("%s Limiter: Wait = %v; want ErrNilProvider", name, err)
		}
		if got := l.Limits(); len(got) != 0 {
			t.Errorf("%s Limiter: Limits = %v; want none", name, got)
		}
	}
	l := mustNew(t, newMemory(t, nil), ratelimit.PerSecond(1))
	//lint:ignore SA1012 a nil context is the input under test
	if _, err := l.Allow(nil, "k"); !errors.Is(err, ratelimit.ErrNilContext) {
		t.Errorf("Allow(nil ctx) = %v; want ErrNilContext", err)
	}
	//lint:ignore SA1012 a nil context is the input under test
	if err := l.Wait(nil, "k"); !errors.Is(err, ratelimit.ErrNilContext) {
		t.Errorf("Wait(nil ctx) = %v; want ErrNilContext", err)
	}
	for _, failOpen := range []bool{false, true} {
		var got error
		mw := ratelimit.Middleware(nil, &ratelimit.MiddlewareConfig{FailOpen: failOpen, OnError: func(_ *http.Request, err error) { got = err }})
		rec := httptest.NewRecorder()
		mw(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		want := http.StatusServiceUnavailable
		if failOpen {
			want = http.StatusNotFound // passed to the handler
		}
		if rec.Code != want || !errors.Is(got, ratelimit.ErrNilProvider) {
			t.Errorf("Middleware(nil) FailOpen=%v: status %d, OnError %v; want %d and ErrNilProvider", failOpen, rec.Code, got, want)
		}
	}
}

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
