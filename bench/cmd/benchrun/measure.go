package main

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"
)

// sample is one contender's run in one round.
type sample struct {
	ops      int
	elapsed  time.Duration
	lat      []time.Duration // sorted
	mallocs  uint64
	errs     int
	firstErr error
	// serverUS is the Redis server's CPU time per operation and calls its
	// commands per operation (scripts' commands included), when measured.
	serverUS float64
	calls    map[string]float64
	// clientUS is this process's CPU time per operation: unlike wall
	// time, it does not grow when other processes take the CPUs.
	clientUS float64
}

func (s sample) opsPerSec() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.ops) / s.elapsed.Seconds()
}

func (s sample) allocsPerOp() float64 {
	if s.ops == 0 {
		return 0
	}
	return float64(s.mallocs) / float64(s.ops)
}

// quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// measure runs op from conc goroutines until d has passed and returns the
// operations done, their latencies and the process's heap allocations per
// operation (nothing else runs while a contender is measured). worker is
// the goroutine's index, so contenders can give each goroutine a name of
// its own.
func measure(ctx context.Context, conc int, d time.Duration, op func(ctx context.Context, worker int) error) sample {
	lats := make([][]time.Duration, conc)
	errs := make([]int, conc)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	start := time.Now()
	stop := start.Add(d)
	for w := range conc {
		wg.Go(func() {
			l := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(stop) {
					break
				}
				err := op(ctx, w)
				if err != nil {
					errs[w]++
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					if errs[w] > 100 {
						break
					}
					continue
				}
				l = append(l, time.Since(t0))
			}
			lats[w] = l
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&m1)
	s := sample{elapsed: elapsed, mallocs: m1.Mallocs - m0.Mallocs, firstErr: firstErr}
	for w := range conc {
		s.lat = append(s.lat, lats[w]...)
		s.errs += errs[w]
	}
	s.ops = len(s.lat)
	if s.ops > 0 {
		s.clientUS = float64(cpu.Microseconds()) / float64(s.ops)
	}
	slices.Sort(s.lat)
	return s
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
