package schedulertest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
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

// BenchmarkRegisterSkips is the registry write that publishes skipped
// ticks: one Register of an instance with 10,000 locked jobs, without
// skips (what a replica sends when its job set changes) and with every
// job's Skips set (what a replica that skipped every job's tick sends with
// its next renewal instead of a Heartbeat), on Redis and PostgreSQL. It
// reports the entry's JSON size (B/entry).
func BenchmarkRegisterSkips(b *testing.B) {
	const jobs = 10_000
	tick := time.Now().Truncate(time.Minute)
	for _, backend := range []string{"redis", "postgres"} {
		reg := opsProviders(b, backend, 1)[0].(lockprovider.Registry)
		for _, skips := range []bool{false, true} {
			inst := batontype.Instance{LockedBy: "bench", Started: tick, Jobs: make([]batontype.JobSpec, jobs)}
			for i := range inst.Jobs {
				j := batontype.JobSpec{Name: fmt.Sprintf("job-%05d", i), Schedule: "@every 1m0s", Locked: true, AtMostFor: time.Minute}
				if skips {
					j.Skips = &batontype.Skips{Held: 1440, StillRunning: 3, Last: batontype.Skip{Tick: tick, Reason: batontype.SkipHeld, Holder: "replica-2"}}
				}
				inst.Jobs[i] = j
			}
			size, err := json.Marshal(inst)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/skips=%v", backend, skips), func(b *testing.B) {
				for b.Loop() {
					if err := reg.Register(b.Context(), inst, time.Minute); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(size)), "B/entry")
			})
		}
	}
}
