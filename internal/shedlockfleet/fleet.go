// Package shedlockfleet runs a mixed fleet, baton scheduler replicas
// beside a replayed ShedLock replica, on one job, for the tests of
// package shedlock's modes (PostgreSQL and Redis beside the package,
// MySQL in internal/integration/shedlockmysqltest). It imports no driver.
package shedlockfleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler"
)

// LockFunc is a replayed ShedLock replica's lock(): it returns the lock
// configuration's createdAt when acquired.
type LockFunc func(ctx context.Context, name string, atMostFor time.Duration) (time.Time, bool, error)

// UnlockFunc is its unlock().
type UnlockFunc func(ctx context.Context, name string, createdAt time.Time, atLeastFor time.Duration) error

// Timing of the interleaving runs: a job every 250ms, held at least 200ms
// (ShedLock's advice: lockAtLeastFor a little below the period), at most
// 2s; 64 ticks take 16s.
const (
	period     = 250 * time.Millisecond
	atLeastFor = 200 * time.Millisecond
	atMostFor  = 2 * time.Second
	wantTicks  = 64
	jobWork    = 20 * time.Millisecond
)

// runLog records every execution of the shared job.
type runLog struct {
	inside   atomic.Int32
	overlaps atomic.Int32

	mu   sync.Mutex
	runs map[int64][]execution // tick (ms) -> its executions, in order
}

// execution is one run of the job. held is a lower bound on the end of
// the lock's minimum hold (its grant plus atLeastFor): no other replica
// may start the job before it.
type execution struct {
	replica string
	start   time.Time
	held    time.Time
}

func (l *runLog) body(replica string, tick, held time.Time) {
	if l.inside.Add(1) != 1 {
		l.overlaps.Add(1)
	}
	l.mu.Lock()
	l.runs[tick.UnixMilli()] = append(l.runs[tick.UnixMilli()], execution{replica, time.Now(), held})
	l.mu.Unlock()
	time.Sleep(jobWork)
	l.inside.Add(-1)
}

// Interleave runs one job named name on two baton scheduler replicas (one
// provider each) and one replayed Java replica (lock, unlock) for
// wantTicks ticks, and checks that no two executions overlapped, that no
// run started inside the minimum hold of the tick's previous run, and that
// both kinds of replica won ticks.
func Interleave(t *testing.T, name string, lock LockFunc, unlock UnlockFunc, goProviders [2]lockprovider.Provider) {
	log := &runLog{runs: map[int64][]execution{}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var scheds []*scheduler.Scheduler
	for i, p := range goProviders {
		replica := fmt.Sprintf("go-%d", i+1)
		s, err := scheduler.New(p, &scheduler.Config{LockedBy: replica})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Every(period).
			Locked(name, scheduler.AtMostFor(atMostFor), scheduler.AtLeastFor(atLeastFor)).
			Do(func(ctx context.Context, run scheduler.Run) error {
				// The scheduler asks for the lock at the tick or later.
				log.body(replica, run.Tick, run.Tick.Add(atLeastFor))
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	start := time.Now()
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}

	// The Java replica fires at each tick by its own clock, up to 15ms
	// early or late, so that it wins some ticks and loses others.
	javaDone := make(chan error, 1)
	go func() {
		javaDone <- func() error {
			for {
				tick := time.UnixMilli((time.Now().UnixMilli()/period.Milliseconds() + 1) * period.Milliseconds())
				fire := tick.Add(time.Duration(rand.IntN(31)-15) * time.Millisecond)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Until(fire)):
				}
				asked := time.Now()
				createdAt, ok, err := lock(ctx, name, atMostFor)
				if ctx.Err() != nil {
					return nil
				}
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				// createdAt is read after asked, truncated to the
				// millisecond.
				log.body("java", tick, asked.Add(atLeastFor-time.Millisecond))
				if err := unlock(context.WithoutCancel(ctx), name, createdAt, atLeastFor); err != nil {
					return err
				}
			}
		}()
	}()

	deadline := time.Now().Add(2 * wantTicks * period)
	for time.Now().Before(deadline) {
		log.mu.Lock()
		n := len(log.runs)
		log.mu.Unlock()
		if n >= wantTicks {
			break
		}
		time.Sleep(period)
	}
	cancel()
	if err := <-javaDone; err != nil {
		t.Errorf("java replica: %v", err)
	}
	for _, s := range scheds {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		scancel()
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	ticks := make([]int64, 0, len(log.runs))
	wins := map[string]int{}
	late := 0
	for tick, rs := range log.runs {
		ticks = append(ticks, tick)
		for i, r := range rs {
			wins[r.replica]++
			if i == 0 {
				continue
			}
			// A second run of a tick is a replica firing so late that the
			// first run's lock had ended, which ShedLock allows; one that
			// starts within the first run's minimum hold is a double run.
			at := func(x time.Time) string { return x.UTC().Format("15:04:05.000") }
			if prev := rs[i-1]; r.start.Before(prev.held) {
				t.Errorf("tick %v: %s started at %v, inside the minimum hold of %s's run (started %v, held until at least %v)",
					at(time.UnixMilli(tick)), r.replica, at(r.start), prev.replica, at(prev.start), at(prev.held))
			} else {
				late++
				t.Logf("tick %v ran again, late: %s at %v after %s at %v (held until at least %v)",
					at(time.UnixMilli(tick)), r.replica, at(r.start), prev.replica, at(prev.start), at(prev.held))
			}
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i] < ticks[j] })
	missed := 0
	if len(ticks) > 1 {
		missed = int((ticks[len(ticks)-1]-ticks[0])/period.Milliseconds()) + 1 - len(ticks)
	}
	t.Logf("%d ticks in %v: wins %v, %d ticks missed in between, %d run again late, %d overlapping executions",
		len(ticks), time.Since(start).Round(time.Millisecond), wins, missed, late, log.overlaps.Load())
	if n := log.overlaps.Load(); n != 0 {
		t.Errorf("%d executions overlapped another one", n)
	}
	if len(ticks) < wantTicks {
		t.Errorf("only %d ticks ran, want at least %d", len(ticks), wantTicks)
	}
	if wins["java"] == 0 || wins["go-1"]+wins["go-2"] == 0 {
		t.Errorf("wins %v: want both the Java replica and the Go replicas to win ticks", wins)
	}
}
