package schedulertest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newSched returns a scheduler closed when the test ends.
func newSched(t *testing.T, p lockprovider.Provider, cfg *scheduler.Config) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(p, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// offsetClock returns a clock that runs behind (negative d) or ahead of
// time.Now by d.
func offsetClock(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// recorder collects hook events.
type recorder struct {
	mu     sync.Mutex
	events map[string][]scheduler.Event
}

func (r *recorder) hooks() scheduler.Hooks {
	add := func(kind string) func(scheduler.Event) {
		return func(ev scheduler.Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.events == nil {
				r.events = map[string][]scheduler.Event{}
			}
			r.events[kind] = append(r.events[kind], ev)
		}
	}
	return scheduler.Hooks{
		Attempt: add("attempt"), Skipped: add("skipped"), Started: add("started"),
		Succeeded: add("succeeded"), Failed: add("failed"), LockLost: add("lost"),
	}
}

func (r *recorder) get(kind string) []scheduler.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scheduler.Event(nil), r.events[kind]...)
}

// faulty wraps the memory provider to inject failures.
type faulty struct {
	*memory.Provider
	acquire func(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error, bool)
	extend  func(ctx context.Context, p lockprovider.ExtendParams) (batontype.Lease, error, bool)
	inspect error // returned by Inspect when set
}

func (f *faulty) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if f.inspect != nil {
		return batontype.LeaseInfo{}, f.inspect
	}
	return f.Provider.Inspect(ctx, name)
}

func (f *faulty) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	if f.acquire != nil {
		if l, err, ok := f.acquire(ctx, p); ok {
			return l, err
		}
	}
	return f.Provider.Acquire(ctx, p)
}

// AcquireBatch answers every item through Acquire, all at once like one
// round trip, so that injected faults and delays apply to batch claims.
func (f *faulty) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	if _, err := lockprovider.ValidateBatch(ps); err != nil {
		return nil, err
	}
	out := make([]lockprovider.BatchResult, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() { out[i].Lease, out[i].Err = f.Acquire(ctx, p) })
	}
	wg.Wait()
	return out, nil
}

func (f *faulty) Extend(ctx context.Context, p lockprovider.ExtendParams) (batontype.Lease, error) {
	if f.extend != nil {
		if l, err, ok := f.extend(ctx, p); ok {
			return l, err
		}
	}
	return f.Provider.Extend(ctx, p)
}

// bare hides the optional interfaces of the memory provider.
type bare struct{ lockprovider.Provider }

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
