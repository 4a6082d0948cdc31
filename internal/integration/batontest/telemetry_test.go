package batontest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/recorder"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

type traceKey struct{}

// The Locker reports attempts, grants, refusals, extensions, losses and
// releases, with tokens, waits and outcomes, on each backend; the lock's
// own events carry the values of the context it was acquired with.
func TestObserverLockEvents(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		p    func(t *testing.T) lockprovider.Provider
	}{
		{"memory", func(*testing.T) lockprovider.Provider { return newMemory(t, nil) }},
		{"redis", func(t *testing.T) lockprovider.Provider { return redisProvider(t, redisenv.Client(t)) }},
		{"postgres", func(t *testing.T) lockprovider.Provider { return postgresProvider(t, pgenv.Schema(t).Pool) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testLockEvents(t, c.p(t))
		})
	}
}

func testLockEvents(t *testing.T, p lockprovider.Provider) {
	rec := &recorder.Recorder{}
	var (
		mu   sync.Mutex
		ctxs []string // trace value of each event's context, in order
	)
	obs := observe.Join(observe.Func(func(ctx context.Context, e observe.Event) {
		v, _ := ctx.Value(traceKey{}).(string)
		mu.Lock()
		defer mu.Unlock()
		ctxs = append(ctxs, v)
		rec.Observe(ctx, e)
	}))
	l := newLocker(t, p, &baton.Config{Observer: obs})
	ctx := context.WithValue(context.Background(), traceKey{}, "trace-1")
	name := "obs-" + testenv.Unique()

	lock, err := l.TryAcquire(ctx, name, &baton.AcquireOptions{AtMostFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.TryAcquire(ctx, name, nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("second TryAcquire: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = l.Acquire(wctx, name, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire of a held lock: %v", err)
	}
	if err := lock.Extend(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := lock.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	short, err := l.TryAcquire(ctx, name+"-short", &baton.AcquireOptions{AtMostFor: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	<-short.Context().Done()
	// The loss is reported just after the context is cancelled.
	for deadline := time.Now().Add(5 * time.Second); len(rec.Events(observe.LockLost)) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no LockLost event after the lock's context ended")
		}
		time.Sleep(time.Millisecond)
	}
	if err := short.Release(context.Background()); !errors.Is(err, baton.ErrLockLost) && err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	evs := rec.Events()
	var kinds []string
	for _, e := range evs {
		if e.Kind != observe.LockAttempt { // Acquire's polls vary in number
			kinds = append(kinds, e.Kind.String())
		}
	}
	want := "lock.acquired lock.refused lock.refused lock.extended lock.released lock.acquired lock.lost lock.released"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	acquired := rec.Events(observe.LockAcquired)
	refused := rec.Events(observe.LockRefused)
	if acquired[0].Token != lock.Token() || acquired[0].Name != name || acquired[0].Outcome != observe.OutcomeGranted ||
		acquired[0].Duration <= 0 || acquired[0].Start.IsZero() {
		t.Errorf("grant event %+v, want token %d and a wait", acquired[0], lock.Token())
	}
	if refused[0].Outcome != observe.OutcomeRefused || !errors.Is(refused[0].Err, baton.ErrNotAcquired) {
		t.Errorf("TryAcquire refusal: %q %v", refused[0].Outcome, refused[0].Err)
	}
	if refused[1].Outcome != observe.OutcomeCanceled || refused[1].Duration < 100*time.Millisecond {
		t.Errorf("Acquire refusal: %q after %v, want canceled after about 150ms", refused[1].Outcome, refused[1].Duration)
	}
	attempts := rec.Events(observe.LockAttempt)
	if len(attempts) < 4 || attempts[0].Outcome != observe.OutcomeGranted || attempts[1].Outcome != observe.OutcomeRefused {
		t.Errorf("attempts %+v, want granted, refused, then Acquire's polls", attempts)
	}
	for _, k := range []observe.Kind{observe.LockExtended, observe.LockReleased} {
		e := rec.Events(k)[0]
		if e.Outcome != observe.OutcomeOK || e.Token != lock.Token() || e.Name != name || e.Duration <= 0 {
			t.Errorf("%v: %+v", k, e)
		}
	}
	lost := rec.Events(observe.LockLost)[0]
	if !errors.Is(lost.Err, baton.ErrLockLost) || lost.Token != short.Token() || lost.Name != name+"-short" {
		t.Errorf("loss event %+v", lost)
	}
	if rel := rec.Events(observe.LockReleased)[1]; rel.Outcome != observe.OutcomeOK && rel.Outcome != observe.OutcomeNotHeld {
		t.Errorf("release after loss: %q", rel.Outcome)
	}
	for i, v := range ctxs {
		if v != "trace-1" && evs[i].Kind != observe.LockExtended {
			t.Errorf("event %d (%v) reported with a context without the caller's values", i, evs[i].Kind)
		}
	}
}

// Without an observer a lock cycle allocates exactly what it does with an
// observer that does nothing: reporting events never allocates, and the
// nil check skips even building them.
func TestObserverAllocs(t *testing.T) {
	ctx := context.Background()
	cycle := func(l *baton.Locker) float64 {
		opts := &baton.AcquireOptions{AtMostFor: 10 * time.Second}
		return testing.AllocsPerRun(200, func() {
			lock, err := l.TryAcquire(ctx, "allocs", opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := lock.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	none := cycle(newLocker(t, newMemory(t, nil), nil))
	noop := cycle(newLocker(t, newMemory(t, nil), &baton.Config{Observer: observe.Func(func(context.Context, observe.Event) {})}))
	if noop != none {
		t.Fatalf("a lock cycle allocates %v times with an observer, %v without: events must not allocate", noop, none)
	}
}

// BenchmarkObserver compares a lock cycle on the memory provider without an
// observer and with one that does nothing: the difference is the cost of
// the events themselves (bench/ compares the adapters on Redis).
func BenchmarkObserver(b *testing.B) {
	for _, c := range []struct {
		name string
		obs  observe.Observer
	}{{"none", nil}, {"noop", observe.Func(func(context.Context, observe.Event) {})}} {
		b.Run(c.name, func(b *testing.B) {
			l, err := baton.NewLocker(newMemory(b, nil), &baton.Config{Observer: c.obs})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			opts := &baton.AcquireOptions{AtMostFor: 10 * time.Second}
			b.ReportAllocs()
			for b.Loop() {
				lock, err := l.TryAcquire(ctx, "bench", opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := lock.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
