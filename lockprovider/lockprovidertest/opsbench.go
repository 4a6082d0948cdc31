package lockprovidertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// BenchLedger measures what the run ledger adds to a scheduled claim and
// release: Acquire with a tick plus Release ("plain"), against AcquireRun
// plus ReleaseRun ("ledger"), on the same provider, each side on names of
// its own.
//
// workers1 is the latency of one scheduled run's claim + release. Plain
// and ledger pairs are interleaved one by one, the side that goes first
// alternating, and each pair is timed: plain_ns/op and ledger_ns/op are
// the medians of the pair times, overhead_% is median ledger / median
// plain - 1 and extra_ns/op median ledger - median plain. A burst of load
// on the machine hits both sides alike and moves neither median much.
//
// workers16 is throughput: 16 goroutines (one name each) run pairs of one
// side at a time, in 50 rounds of a short phase of each side (which goes
// first alternating).
// plain_ns/op and ledger_ns/op are each side's wall time per pair over all
// its phases, overhead_% is the median over the rounds (a plain phase and
// a ledger phase) of ledger time / plain time - 1. It shows the ledger's
// share of the backend's capacity, where the backend is the bottleneck.
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
			claimed := time.Now()
			// As the scheduler does: the run's duration on the monotonic
			// clock (see lockprovider.RunEnd.Elapsed).
			return led.ReleaseRun(ctx, rp, lockprovider.RunEnd{
				Run:     batontype.RunRecord{Job: name, Token: l.Token, Tick: l.Tick, LockedBy: "bench", Started: l.GrantedAt},
				Outcome: batontype.OutcomeSucceeded, Elapsed: time.Since(claimed),
			})
		}
	}
	b.Run("workers1", func(b *testing.B) {
		ctx := context.Background()
		names := [2]string{fmt.Sprintf("bl-%s-1-0", id), fmt.Sprintf("bl-%s-1-1", id)}
		ops := [2]func(context.Context, string) error{op(false), op(true)}
		times := [2][]time.Duration{make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)}
		b.ResetTimer()
		for i := range b.N {
			for j := range 2 {
				k := (i + j) % 2
				start := time.Now()
				if err := ops[k](ctx, names[k]); err != nil {
					b.Fatal(err)
				}
				times[k] = append(times[k], time.Since(start))
			}
		}
		b.StopTimer()
		med := func(k int) float64 {
			slices.Sort(times[k])
			return float64(times[k][len(times[k])/2].Nanoseconds())
		}
		plain, ledger := med(0), med(1)
		b.ReportMetric(plain, "plain_ns/op")
		b.ReportMetric(ledger, "ledger_ns/op")
		b.ReportMetric(100*(ledger/plain-1), "overhead_%")
		b.ReportMetric(ledger-plain, "extra_ns/op")
	})
	b.Run("workers16", func(b *testing.B) {
		const workers, rounds = 16, 50
		per := max(b.N/rounds, workers)
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
		b.StopTimer()
		slices.Sort(ratios)
		ns := func(k int) float64 { return float64(spent[k].Nanoseconds()) / float64(per*rounds) }
		b.ReportMetric(ns(0), "plain_ns/op")
		b.ReportMetric(ns(1), "ledger_ns/op")
		b.ReportMetric(100*(ratios[len(ratios)/2]-1), "overhead_%")
	})
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
