package schedulertest

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/baton-go/baton/scheduler"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleJobs registers 10,000 locked jobs, none due for an hour, and
// measures the process's CPU time per second of wall time while they wait
// (cpu-ms/s) and the heap they take (B/job). It runs once whatever b.N.
func BenchmarkIdleJobs(b *testing.B) {
	const jobs = 10_000
	const idle = 3 * time.Second
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := scheduler.New(newMemory(b, nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Distinct daily ticks from one hour ahead: 10,000 entries in the
	// timer heap, none firing during the measurement.
	start := time.Now().Add(time.Hour)
	for i := range jobs {
		off := time.Duration(start.Add(time.Duration(i)*time.Second).UnixNano() % int64(24*time.Hour))
		_, err := s.Every(24*time.Hour, scheduler.Offset(off)).
			Locked(fmt.Sprintf("idle-%05d", i), scheduler.AtMostFor(time.Minute)).
			Do(func(context.Context, scheduler.Run) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	time.Sleep(500 * time.Millisecond) // settle
	b.ResetTimer()
	c0, w0 := cpuTime(), time.Now()
	time.Sleep(idle)
	cpu, wall := cpuTime()-c0, time.Since(w0)
	b.StopTimer()
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/wall.Seconds(), "cpu-ms/s")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/jobs, "B/job")
	b.ReportMetric(0, "ns/op")
}
