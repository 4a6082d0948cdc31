package schedulertest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
)

var errLostReply = errors.New("read tcp 127.0.0.1:6379: i/o timeout")

// An acquire whose reply is lost (the provider granted the lease, the
// scheduler saw a transport error) must not keep the job's name held until
// the lease expires: the scheduler releases with the same owner token, so
// the next tick runs.
func TestAcquireLostReplyReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, nil)
		p := &faulty{Provider: mem}
		var calls atomic.Int32
		p.acquire = func(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error, bool) {
			l, err := mem.Acquire(ctx, ap)
			if calls.Add(1) == 1 && err == nil {
				return batontype.Lease{}, errLostReply, true
			}
			return l, err, true
		}
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{Observer: rec.hooks()})
		var ran []time.Time
		must(s.Every(time.Minute).Locked("x", scheduler.AtMostFor(10*time.Minute)).Do(func(_ context.Context, run scheduler.Run) error {
			ran = append(ran, run.Tick)
			return nil
		}))
		start(t, s)
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		if f := rec.get("failed"); len(f) != 1 || !errors.Is(f[0].Err, errLostReply) {
			t.Errorf("failed = %+v, want the lost reply", f)
		}
		if len(ran) != 1 || !ran[0].Equal(time.Date(2000, 1, 1, 0, 2, 0, 0, time.UTC)) {
			t.Errorf("ran ticks %v, want the 00:02 tick (the lost grant must have been released)", ran)
		}
	})
}

// Close interrupting an acquire that the provider performed releases it
// too, so other replicas are not blocked until the lease expires.
func TestAcquireInterruptedByCloseReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, nil)
		p := &faulty{Provider: mem}
		acquired := make(chan struct{})
		p.acquire = func(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error, bool) {
			if _, err := mem.Acquire(ctx, ap); err != nil {
				return batontype.Lease{}, err, true
			}
			close(acquired)
			<-ctx.Done() // the reply never comes
			return batontype.Lease{}, ctx.Err(), true
		}
		s, err := scheduler.New(p, &scheduler.Config{CallTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		must(s.Every(time.Minute).Locked("x", scheduler.AtMostFor(10*time.Minute)).Do(noop))
		start(t, s)
		<-acquired
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		info, err := mem.Inspect(context.Background(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if info.Held {
			t.Errorf("the interrupted acquire's lease is still held: %+v", info)
		}
	})
}

// slowCalls delays every acquire and extend by d before passing it on.
func slowCalls(mem *memory.Provider, d time.Duration) *faulty {
	return &faulty{
		Provider: mem,
		acquire: func(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error, bool) {
			time.Sleep(d)
			l, err := mem.Acquire(ctx, ap)
			return l, err, true
		},
		extend: func(ctx context.Context, ep lockprovider.ExtendParams) (batontype.Lease, error, bool) {
			time.Sleep(d)
			l, err := mem.Extend(ctx, ep)
			return l, err, true
		},
	}
}

// AutoRenew renews a third of the lease after each renewal's send, so
// round trips of up to a third of the lease (and a little more) never cost
// the lock: a 1.5s lease held for 6s, with every call taking 27-40% of it.
func TestAutoRenewSlowRoundTrips(t *testing.T) {
	const atMostFor = 1500 * time.Millisecond
	for _, frac := range []int{27, 33, 40} {
		t.Run(fmt.Sprintf("%d%%", frac), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := newMemory(t, nil)
				rec := &recorder{}
				s := newSched(t, slowCalls(mem, atMostFor*time.Duration(frac)/100), &scheduler.Config{Observer: rec.hooks()})
				var cause error
				must(s.Every(time.Minute).Locked("renewed", scheduler.AtMostFor(atMostFor), scheduler.AutoRenew()).Do(
					func(ctx context.Context, run scheduler.Run) error {
						for range 60 {
							select {
							case <-ctx.Done():
								cause = context.Cause(ctx)
								return ctx.Err()
							case <-time.After(100 * time.Millisecond):
							}
							if info, err := mem.Inspect(ctx, "renewed"); err != nil || !info.Held {
								cause = fmt.Errorf("lease lapsed on the backend: %+v, %v", info, err)
								return cause
							}
						}
						return nil
					}))
				start(t, s)
				time.Sleep(time.Minute + 8*time.Second)
				synctest.Wait()
				if cause != nil || len(rec.get("lost")) != 0 || len(rec.get("succeeded")) != 1 {
					t.Errorf("round trips of %d%% of the lease: cause %v, lost %d, succeeded %d", frac, cause, len(rec.get("lost")), len(rec.get("succeeded")))
				}
			})
		})
	}
}

// Run.Check and the job's context answer from the clock, not from the
// window's timer: after the clock jumps past the window (as across a
// pause), the context's first Err is non-nil, Check fails, and a fenced write given the job's context is
// refused before it reaches the resource.
func TestRunCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var jump atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(jump.Load())) }
		rec := &recorder{}
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Now: now, Observer: rec.hooks()})
		var res fence.Resource
		var before, ctxErr, first, write, afterCtx error
		must(s.Every(time.Minute).Locked("checked", scheduler.AtMostFor(10*time.Second)).Do(
			func(ctx context.Context, run scheduler.Run) error {
				before = run.Check()
				jump.Store(int64(time.Minute))
				// The job's context (the lease's) checks the clock too: its
				// Err is the first look, before Check and before the timer
				// can run.
				ctxErr = ctx.Err()
				first = run.Check()
				afterCtx = context.Cause(ctx)
				write = res.DoContext(ctx, run.Token, func() error { t.Error("the fenced write ran"); return nil })
				return nil
			}))
		must(s.Every(time.Minute).Name("unlocked").Do(func(ctx context.Context, run scheduler.Run) error {
			if err := run.Check(); !errors.Is(err, scheduler.ErrNotLocked) {
				t.Errorf("Check of an unlocked run: %v, want ErrNotLocked", err)
			}
			return nil
		}))
		start(t, s)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if before != nil {
			t.Errorf("Check inside the window: %v", before)
		}
		if ctxErr == nil {
			t.Error("the job's context was still open after the window, before any Check")
		}
		if !errors.Is(first, scheduler.ErrLockLost) || !errors.Is(afterCtx, scheduler.ErrLockLost) {
			t.Errorf("first Check after the jump: %v, context cause %v; want ErrLockLost", first, afterCtx)
		}
		if !errors.Is(write, scheduler.ErrLockLost) || res.Last() != 0 {
			t.Errorf("fenced write after the window: %v (resource saw token %d), want ErrLockLost and nothing written", write, res.Last())
		}
		if n := len(rec.get("lost")); n != 1 {
			t.Errorf("%d LockLost hooks, want 1", n)
		}
	})
}
