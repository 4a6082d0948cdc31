package ratelimittest

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/recorder"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/observe"
	"github.com/baton-go/baton/ratelimit"
)

// Decisions are reported with the tightest limit's policy name, the
// outcome, the retry-after and the cost, on every backend; the Limiter
// the observer was added to stays silent.
func TestObserverDecisions(t *testing.T) {
	t.Parallel()
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			prov := pc.new(t)
			base := mustNew(t, prov,
				ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 2, Period: time.Second, Burst: 2, Name: "burst"},
				ratelimit.Limit{Algorithm: ratelimit.FixedWindow, Rate: 100, Period: time.Hour})
			rec := &recorder.Recorder{}
			l := withObserver(t, prov, base, rec)
			ctx := context.Background()
			key := "user-" + testenv.Unique()
			for range 3 {
				if _, err := l.Allow(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := base.Allow(ctx, key); err != nil {
				t.Fatal(err)
			}
			if err := l.Wait(ctx, key); err != nil {
				t.Fatal(err)
			}
			evs := rec.Events()
			if len(evs) < 4 {
				t.Fatalf("%d events, want 3 decisions and Wait's", len(evs))
			}
			for i, e := range evs {
				want := observe.OutcomeAllowed
				if i == 2 {
					want = observe.OutcomeDenied
				}
				if i < 3 && (e.Kind != observe.RateDecision || e.Outcome != want || e.Cost != 1 || e.Duration <= 0) {
					t.Errorf("decision %d: %+v, want %s", i, e, want)
				}
				if e.Name != "" || e.Job != "" {
					t.Errorf("decision %d names a lock or job: %+v", i, e)
				}
			}
			if d := evs[2]; d.Policy != "burst" || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
				t.Errorf("denial: policy %q retry after %v, want burst and up to 1s", d.Policy, d.RetryAfter)
			}
			if a := evs[0]; a.Policy != "burst" && a.Policy != "100-per-1h" {
				t.Errorf("allowed: policy %q", a.Policy)
			}
			if last := evs[len(evs)-1]; last.Kind != observe.RateDecision || last.Outcome != observe.OutcomeAllowed {
				t.Errorf("Wait's last decision %+v, want allowed", last)
			}
		})
	}
}

// A provider that cannot be reached is reported as a RateError, and the
// middleware's fallback as a RateFallback with its policy.
func TestObserverProviderDown(t *testing.T) {
	t.Parallel()
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t)), MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = client.Close() })
	p, err := redisprovider.New(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Recorder{}
	l := withObserver(t, p, mustNew(t, p, ratelimit.PerSecond(10)), rec)
	for _, open := range []bool{true, false} {
		h := ratelimit.Middleware(l, &ratelimit.MiddlewareConfig{FailOpen: open})(okHandler)
		if code := serve(h, nil).Code; code != map[bool]int{true: http.StatusOK, false: http.StatusServiceUnavailable}[open] {
			t.Errorf("FailOpen=%v: %d", open, code)
		}
	}
	var got []string
	for _, e := range rec.Events() {
		got = append(got, e.Kind.String()+":"+e.Outcome)
		if e.Policy != "10-per-1s" || !errors.Is(e.Err, batontype.ErrUnavailable) {
			t.Errorf("%v: policy %q err %v", e.Kind, e.Policy, e.Err)
		}
	}
	want := []string{"ratelimit.error:error", "ratelimit.fallback:fail_open", "ratelimit.error:error", "ratelimit.fallback:fail_closed"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}

// A decision allocates as often with a no-op observer as without one:
// events never allocate.
func TestObserverAllocs(t *testing.T) {
	mem := newMemory(t, nil)
	base := mustNew(t, mem, ratelimit.PerSecond(1_000_000))
	noop := withObserver(t, mem, base, observe.Func(func(context.Context, observe.Event) {}))
	// AllocsPerRun counts every goroutine's allocations, and goroutines
	// of earlier tests (client pools, sweepers) may allocate meanwhile on
	// a busy machine: the least of a few runs is the decision's own.
	allocs := func(l *ratelimit.Limiter) float64 {
		least := math.Inf(1)
		for range 5 {
			least = min(least, testing.AllocsPerRun(200, func() {
				if _, err := l.Allow(context.Background(), "k"); err != nil {
					t.Fatal(err)
				}
			}))
		}
		return least
	}
	if none, with := allocs(base), allocs(noop); none != with {
		t.Fatalf("a decision allocates %v times with an observer, %v without", with, none)
	}
}

// withObserver returns a Limiter with l's limits on p (l's provider) that
// reports to obs; it shares l's budgets.
func withObserver(t *testing.T, p lockprovider.RateLimiter, l *ratelimit.Limiter, obs observe.Observer) *ratelimit.Limiter {
	t.Helper()
	o, err := ratelimit.New(p, l.Limits(), &ratelimit.Config{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// noRefund fails every refund, as a backend lost just after the booking
// would.
type noRefund struct{ lockprovider.RateLimiter }

var errRefundLost = errors.New("connection lost")

func (n noRefund) RateLimit(ctx context.Context, r lockprovider.RateRequest) (lockprovider.RateResult, error) {
	if r.Refund {
		return lockprovider.RateResult{}, errRefundLost
	}
	return n.RateLimiter.RateLimit(ctx, r)
}

// A slot that WaitN booked and could not give back is not lost silently:
// the observer hears a RateError naming the refund.
func TestObserverRefundLost(t *testing.T) {
	t.Parallel()
	mem := memoryAt(t, newFakeClock(epoch))
	lim := ratelimit.Limit{Algorithm: ratelimit.GCRA, Rate: 1, Period: time.Hour, Burst: 1}
	allow(t, mustNew(t, mem, lim), "k", 1) // the next slot is an hour away
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder.Recorder{}
	// The Wait books the slot, is cancelled before it reads the answer,
	// and then cannot give the slot back.
	l, err := ratelimit.New(cancelInFlight{RateLimiter: noRefund{mem}, cancel: cancel}, []ratelimit.Limit{lim}, &ratelimit.Config{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait cancelled in flight: %v; want context.Canceled", err)
	}
	var lost []observe.Event
	for _, e := range rec.Events() {
		if e.Kind == observe.RateError {
			lost = append(lost, e)
		}
	}
	if len(lost) != 1 {
		t.Fatalf("%d RateError events for one lost refund; want 1 (events %v)", len(lost), rec.Events())
	}
	if e := lost[0]; !errors.Is(e.Err, errRefundLost) || e.Outcome != observe.OutcomeError || e.Policy != "1-per-1h" {
		t.Errorf("refund event: err %v, outcome %q, policy %q", e.Err, e.Outcome, e.Policy)
	}
}
