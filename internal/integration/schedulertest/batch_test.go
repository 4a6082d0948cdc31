package schedulertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
)

// counting counts the provider calls a scheduler makes.
type counting struct {
	*memory.Provider
	single, batches, batchRuns, singleRuns atomic.Int64
	sizes                                  sync.Map // batch size -> count
}

func (c *counting) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	c.single.Add(1)
	return c.Provider.Acquire(ctx, p)
}

func (c *counting) AcquireRun(ctx context.Context, p lockprovider.AcquireParams, run lockprovider.RunStart) (batontype.Lease, error) {
	c.singleRuns.Add(1)
	return c.Provider.AcquireRun(ctx, p, run)
}

func (c *counting) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	c.batches.Add(1)
	c.count(len(ps))
	return c.Provider.AcquireBatch(ctx, ps)
}

func (c *counting) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	c.batchRuns.Add(1)
	c.count(len(ps))
	return c.Provider.AcquireRunBatch(ctx, ps, run)
}

func (c *counting) count(n int) {
	v, _ := c.sizes.LoadOrStore(n, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// noBatchLedger has the batch claim but not the ledger's.
type noBatchLedger struct{ *counting }

func (noBatchLedger) AcquireRunBatch() {} // hides counting's

// Locked jobs due at one tick are claimed in batches of at most
// lockprovider.MaxBatch, by every instance, and each tick of each job runs
// exactly once across three instances, with the ledger recording each run
// in the claim's own call; without a batch claim that opens runs, the
// ledger falls back to single claims.
func TestBatchClaims(t *testing.T) {
	const jobs = 2500
	for _, c := range []struct {
		name   string
		ledger bool
		hide   bool // the provider lacks BatchLedger
	}{{"plain", false, false}, {"ledger", true, false}, {"ledger-without-batch-ledger", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := newMemory(t, nil)
				cp := &counting{Provider: mem}
				var p lockprovider.Provider = cp
				if c.hide {
					p = noBatchLedger{cp}
				}
				var mu sync.Mutex
				ran := map[string]int{}
				var tokens sync.Map
				for i := range 3 {
					s := newSched(t, p, &scheduler.Config{DisableRegistry: true, Ledger: c.ledger, LockedBy: fmt.Sprintf("i%d", i)})
					for j := range jobs {
						must(s.Every(time.Minute).Locked(fmt.Sprintf("batch-%04d", j), scheduler.AtMostFor(30*time.Second)).Do(
							func(_ context.Context, run scheduler.Run) error {
								if prev, loaded := tokens.Swap(run.Job, run.Token); loaded && prev.(int64) >= run.Token {
									t.Errorf("%s: token %d after %d", run.Job, run.Token, prev)
								}
								mu.Lock()
								defer mu.Unlock()
								ran[run.Job+run.Tick.Format(time.TimeOnly)]++
								return nil
							}))
					}
					start(t, s)
				}
				time.Sleep(2*time.Minute + time.Second)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(ran) != 2*jobs {
					t.Errorf("%d job ticks ran, want %d", len(ran), 2*jobs)
				}
				for k, n := range ran {
					if n != 1 {
						t.Errorf("%s ran %d times", k, n)
					}
				}
				// 3 instances x 2 ticks x 3 chunks (1000, 1000, 500).
				switch {
				case c.hide:
					if cp.singleRuns.Load() != 3*2*jobs || cp.batches.Load()+cp.batchRuns.Load() != 0 {
						t.Errorf("%d single claims and %d batches, want %d and none", cp.singleRuns.Load(), cp.batches.Load()+cp.batchRuns.Load(), 3*2*jobs)
					}
				default:
					want := &cp.batches
					if c.ledger {
						want = &cp.batchRuns
					}
					if want.Load() != 18 || cp.single.Load()+cp.singleRuns.Load() != 0 {
						t.Errorf("%d batches and %d single claims, want 18 and none", want.Load(), cp.single.Load()+cp.singleRuns.Load())
					}
					cp.sizes.Range(func(k, v any) bool {
						if n := k.(int); n > lockprovider.MaxBatch || (n != lockprovider.MaxBatch && n != jobs%lockprovider.MaxBatch) {
							t.Errorf("a batch of %d", n)
						}
						return true
					})
				}
				if c.ledger {
					runs, err := mem.Runs(t.Context(), batontype.RunQuery{Job: "batch-0042"})
					if err != nil || len(runs) != 2 || runs[0].Outcome != batontype.OutcomeSucceeded {
						t.Errorf("ledger of batch-0042: %+v, %v; want two successful runs", runs, err)
					}
				}
			})
		})
	}
}

// unknownBatch grants every item, then reports an error of unknown
// outcome for the whole batch, as a lost reply would.
type unknownBatch struct {
	*memory.Provider
	delay time.Duration
	err   error
}

func (u *unknownBatch) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	res, err := u.Provider.AcquireBatch(ctx, ps)
	time.Sleep(u.delay)
	if u.err == nil {
		return res, err
	}
	for i := range res {
		res[i] = lockprovider.BatchResult{Err: u.err}
	}
	return res, nil
}

// A batch claim of unknown outcome runs nothing, reports a failure per
// job, and releases each name with the claim's owner token, so the names
// are free at once rather than held until their leases expire. A batch
// whose answer comes after the trust window (anchored at the batch's
// send) starts nothing either.
func TestBatchClaimUnknownOutcome(t *testing.T) {
	for _, c := range []struct {
		name       string
		delay      time.Duration
		err        error
		wantFailed bool
	}{
		{"unknown", 0, errors.New("connection reset"), true},
		{"late", 2 * time.Second, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := newMemory(t, nil)
				rec := &recorder{}
				s := newSched(t, &unknownBatch{Provider: mem, delay: c.delay, err: c.err},
					&scheduler.Config{DisableRegistry: true, Observer: rec.hooks()})
				names := []string{"u-1", "u-2", "u-3"}
				for _, n := range names {
					must(s.Every(time.Minute).Locked(n, scheduler.AtMostFor(time.Second)).Do(func(context.Context, scheduler.Run) error {
						t.Errorf("a job ran after a batch claim that cannot be trusted")
						return nil
					}))
				}
				start(t, s)
				time.Sleep(time.Minute + 3*time.Second)
				synctest.Wait()
				if c.wantFailed {
					if f := rec.get("failed"); len(f) != len(names) || !errors.Is(f[0].Err, c.err) {
						t.Errorf("failed = %+v", f)
					}
					for _, n := range names {
						// Free at once: released with the claim's owner.
						if _, err := mem.Acquire(t.Context(), lockprovider.AcquireParams{Name: n, Owner: lockprovider.NewOwner(), AtMostFor: time.Second}); err != nil {
							t.Errorf("%s after the failed batch: %v", n, err)
						}
					}
				} else if l := rec.get("lost"); len(l) != len(names) || !errors.Is(l[0].Err, scheduler.ErrLockLost) {
					t.Errorf("lost = %+v", l)
				}
			})
		})
	}
}
