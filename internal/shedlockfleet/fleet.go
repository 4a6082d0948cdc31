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
	runs map[int64][]string // tick (ms) -> replicas that ran it
}

func (l *runLog) body(replica string, tick time.Time) {
	if l.inside.Add(1) != 1 {
		l.overlaps.Add(1)
	}
	l.mu.Lock()
	l.runs[tick.UnixMilli()] = append(l.runs[tick.UnixMilli()], replica)
	l.mu.Unlock()
	time.Sleep(jobWork)
	l.inside.Add(-1)
}

// Interleave runs one job named name on two baton scheduler replicas (one
// provider each) and one replayed Java replica (lock, unlock) for
// wantTicks ticks, and checks that no two executions overlapped, that no
// tick ran twice, and that both kinds of replica won ticks.
func Interleave(t *testing.T, name string, lock LockFunc, unlock UnlockFunc, goProviders [2]lockprovider.Provider) {
	log := &runLog{runs: map[int64][]string{}}
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
				log.body(replica, run.Tick)
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
				log.body("java", tick)
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
	for tick, rs := range log.runs {
		ticks = append(ticks, tick)
		for _, r := range rs {
			wins[r]++
		}
		if len(rs) > 1 {
			t.Errorf("tick %v ran %d times: %v", time.UnixMilli(tick).UTC().Format("15:04:05.000"), len(rs), rs)
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i] < ticks[j] })
	missed := 0
	if len(ticks) > 1 {
		missed = int((ticks[len(ticks)-1]-ticks[0])/period.Milliseconds()) + 1 - len(ticks)
	}
	t.Logf("%d ticks in %v: wins %v, %d ticks missed in between, %d overlapping executions",
		len(ticks), time.Since(start).Round(time.Millisecond), wins, missed, log.overlaps.Load())
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
