package schedulertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

// batchProvider is what the Redis and PostgreSQL providers implement
// among the interfaces the scheduler's batching uses.
type batchProvider interface {
	lockprovider.Provider
	lockprovider.BatchAcquirer
	lockprovider.BatchReleaser
	lockprovider.Ledger
	lockprovider.BatchLedger
}

// releaseCounter passes a real provider's calls through, counting single
// and batch releases, with the ledger or without. The first call waits
// for hold (if set) before it is sent: the releases arriving meanwhile
// queue behind a call in flight, which is the case the batching is for,
// whatever the machine's load does to when the runs' goroutines wake.
type releaseCounter struct {
	batchProvider
	singles, batches, items atomic.Int64
	hold                    func()
	first                   sync.Once
}

func (c *releaseCounter) call() {
	if c.hold != nil {
		c.first.Do(c.hold)
	}
}

func (c *releaseCounter) Release(ctx context.Context, p lockprovider.ReleaseParams) error {
	c.singles.Add(1)
	c.call()
	return c.batchProvider.Release(ctx, p)
}

func (c *releaseCounter) ReleaseRun(ctx context.Context, p lockprovider.ReleaseParams, end lockprovider.RunEnd) error {
	c.singles.Add(1)
	c.call()
	return c.batchProvider.ReleaseRun(ctx, p, end)
}

func (c *releaseCounter) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	c.batches.Add(1)
	c.items.Add(int64(len(ps)))
	c.call()
	return c.batchProvider.ReleaseBatch(ctx, ps)
}

func (c *releaseCounter) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	c.batches.Add(1)
	c.items.Add(int64(len(ps)))
	c.call()
	return c.batchProvider.ReleaseRunBatch(ctx, ps, ends)
}

// The releases of runs that end together reach the backend in batches:
// far fewer calls than runs, each lease freed, each release counted once.
func TestReleasesBatched(t *testing.T) {
	backends := map[string]func(t *testing.T) batchProvider{
		"redis": func(t *testing.T) batchProvider {
			p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		"postgres": func(t *testing.T) batchProvider {
			p, err := pgprovider.New(pgenv.Schema(t).Pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			return p
		},
	}
	for name, newProvider := range backends {
		for _, ledger := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ledger=%v", name, ledger), func(t *testing.T) {
				releasedTogether(t, newProvider(t), ledger)
			})
		}
	}
}

// releasedTogether runs 300 locked jobs at one tick, ends them together
// and checks how their releases reached the backend (and, with the
// ledger, that every run's end was recorded).
func releasedTogether(t *testing.T, bp batchProvider, ledger bool) {
	const jobs = 300
	var returned atomic.Int64
	allReturned := make(chan struct{})
	// The first release call is held until every run has returned and a
	// moment more (well inside the release timeout), so the others queue
	// behind it even when a loaded machine wakes the runs' goroutines
	// one by one: without the hold, each release could find no call in
	// flight and go alone, which is the documented behaviour for a lone
	// release, not a defect.
	p := &releaseCounter{batchProvider: bp, hold: func() {
		select {
		case <-allReturned:
			time.Sleep(200 * time.Millisecond)
		case <-time.After(2 * time.Second):
		}
	}}
	s := newSched(t, p, &scheduler.Config{DisableRegistry: true, Ledger: ledger})
	// One tick in the test's time: the next whole second but one,
	// every hour.
	tick := time.Now().Truncate(time.Second).Add(2 * time.Second)
	off := time.Duration(tick.UnixNano() % int64(time.Hour))
	var started sync.WaitGroup
	started.Add(jobs)
	gate := make(chan struct{})
	var ran atomic.Int64
	names := make([]string, jobs)
	for i := range names {
		names[i] = fmt.Sprintf("batched-release-%03d", i)
		must(s.Every(time.Hour, scheduler.Offset(off)).Locked(names[i], scheduler.AtMostFor(time.Minute)).
			Do(func(context.Context, scheduler.Run) error {
				ran.Add(1)
				started.Done()
				<-gate // all runs end together
				if returned.Add(1) == jobs {
					close(allReturned)
				}
				return nil
			}))
	}
	start(t, s)
	started.Wait()
	close(gate)
	in := bp.(lockprovider.Inspector)
	for _, n := range names {
		for deadline := time.Now().Add(10 * time.Second); ; {
			info, err := in.Inspect(t.Context(), n)
			if err != nil {
				t.Fatal(err)
			}
			if !info.Held {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still held 10s after its run ended", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	singles, batches, items := p.singles.Load(), p.batches.Load(), p.items.Load()
	if ran.Load() != jobs || singles+items != jobs {
		t.Errorf("%d runs, %d releases (%d alone, %d in batches); want %d each", ran.Load(), singles+items, singles, items, jobs)
	}
	if calls := singles + batches; calls > jobs/4 {
		t.Errorf("%d release calls (%d alone, %d batches) for %d runs ending together; want at most %d", calls, singles, batches, jobs, jobs/4)
	}
	t.Logf("%d runs released in %d calls (%d alone, %d batches)", jobs, singles+batches, singles, batches)
	if !ledger {
		return
	}
	for _, n := range names {
		runs, err := bp.Runs(t.Context(), batontype.RunQuery{Job: n})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Outcome != batontype.OutcomeSucceeded || runs[0].Finished.IsZero() {
			t.Errorf("ledger of %s: %+v, want one finished, succeeded run", n, runs)
		}
	}
}
