package lockprovidertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// BenchLedger measures what the run ledger adds to a scheduled claim and
// release: Acquire with a tick plus Release, against AcquireRun plus
// ReleaseRun, on the same provider, with 1 and 16 workers (one name
// each). The two are interleaved in rounds, so load changes on the machine
// affect both alike. It reports plain_ns/op, ledger_ns/op and
// overhead_% (ledger over plain, the median of the rounds' ratios).
func BenchLedger(b *testing.B, p lockprovider.Provider) {
	led, ok := p.(lockprovider.Ledger)
	if !ok {
		b.Fatalf("provider %T does not implement lockprovider.Ledger", p)
	}
	id := randomID()
	var tick atomic.Int64
	tick.Store(baseTick.UnixMilli())
	op := func(ledger bool) func(ctx context.Context, name string) error {
		return func(ctx context.Context, name string) error {
			owner := lockprovider.NewOwner()
			ap := lockprovider.AcquireParams{Name: name, Owner: owner, LockedBy: "bench", AtMostFor: time.Minute,
				Tick: time.UnixMilli(tick.Add(1))}
			rp := lockprovider.ReleaseParams{Name: name, Owner: owner}
			if !ledger {
				if _, err := p.Acquire(ctx, ap); err != nil {
					return err
				}
				return p.Release(ctx, rp)
			}
			l, err := led.AcquireRun(ctx, ap, lockprovider.RunStart{})
			if err != nil {
				return err
			}
			return led.ReleaseRun(ctx, rp, lockprovider.RunEnd{
				Run:     lockprovider.RunRecord{Job: name, Token: l.Token, Tick: l.Tick, LockedBy: "bench", Started: l.GrantedAt},
				Outcome: lockprovider.OutcomeSucceeded,
			})
		}
	}
	for _, workers := range []int{1, 16} {
		b.Run(fmt.Sprintf("workers%d", workers), func(b *testing.B) {
			const rounds = 20
			per := max(b.N/rounds, 1)
			var spent [2]time.Duration
			ratios := make([]float64, 0, rounds)
			b.ResetTimer()
			for r := range rounds {
				var round [2]time.Duration
				for i := range 2 {
					k := (i + r) % 2
					round[k] = driveNamed(b, fmt.Sprintf("bl-%s-%d-%d", id, workers, k), workers, per, op(k == 1))
					spent[k] += round[k]
				}
				ratios = append(ratios, float64(round[1])/float64(round[0]))
			}
			slices.Sort(ratios)
			ns := func(k int) float64 { return float64(spent[k].Nanoseconds()) / float64(per*rounds) }
			b.ReportMetric(ns(0), "plain_ns/op")
			b.ReportMetric(ns(1), "ledger_ns/op")
			// The median of the rounds' ratios resists bursts of load
			// that hit one round of one side.
			b.ReportMetric(100*(ratios[len(ratios)/2]-1), "overhead_%")
		})
	}
}

// driveNamed runs n operations spread over workers goroutines, each on a
// name of its own, and returns the wall time.
func driveNamed(b *testing.B, base string, workers, n int, op func(ctx context.Context, name string) error) time.Duration {
	ctx := context.Background()
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	start := time.Now()
	for w := range workers {
		name := fmt.Sprintf("%s-%d", base, w)
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := op(ctx, name); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
