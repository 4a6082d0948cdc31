package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestQuantileAndMedian(t *testing.T) {
	lat := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if q := quantile(lat, 0.5); q != 5 {
		t.Errorf("p50 = %v, want 5", q)
	}
	if q := quantile(lat, 0.99); q != 10 {
		t.Errorf("p99 = %v, want 10", q)
	}
	if q := quantile(nil, 0.5); q != 0 {
		t.Errorf("p50 of nothing = %v, want 0", q)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v, want 2", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
}

// measure counts operations and errors, and stops at its deadline.
func TestMeasure(t *testing.T) {
	fail := errors.New("boom")
	s := measure(context.Background(), 4, 50*time.Millisecond, func(_ context.Context, w int) error {
		time.Sleep(time.Millisecond)
		if w == 3 {
			return fail
		}
		return nil
	})
	if s.ops == 0 || s.errs == 0 || !errors.Is(s.firstErr, fail) {
		t.Fatalf("ops %d errs %d first %v", s.ops, s.errs, s.firstErr)
	}
	if s.elapsed < 50*time.Millisecond || s.elapsed > 2*time.Second {
		t.Errorf("elapsed %v", s.elapsed)
	}
	if len(s.lat) != s.ops || s.lat[0] < time.Millisecond {
		t.Errorf("%d latencies for %d ops, fastest %v", len(s.lat), s.ops, s.lat[0])
	}
}

// A synthetic result renders into tables, budget lines and SVG charts.
func TestReport(t *testing.T) {
	mk := func(ops int, lat time.Duration) sample {
		return sample{ops: ops, elapsed: time.Second, lat: []time.Duration{lat, lat, 2 * lat}, mallocs: uint64(ops) * 10, clientUS: 10}
	}
	c := comparison{
		id: "lock-test", title: "Test locks", concs: []int{1, 16},
		contenders: []contender{{name: "baton provider"}, {name: "redislock"}},
		ratios:     []ratio{{"baton provider", "redislock", 1.05}},
	}
	res := result{cmp: c, cells: []cell{
		{conc: 1, samples: [][]sample{{mk(100, time.Millisecond)}, {mk(90, time.Millisecond)}}},
		{conc: 16, samples: [][]sample{{mk(1000, time.Millisecond), mk(1100, time.Millisecond), mk(900, time.Millisecond)},
			{mk(1000, time.Millisecond), mk(1000, time.Millisecond), mk(1000, time.Millisecond)}}},
	}}
	if r := res.cells[1].ratio(c, c.ratios[0]); r != 1.0 {
		t.Errorf("ratio = %v, want 1.0 (the median of 1.0, 1.1, 0.9)", r)
	}
	h := comparison{id: "handoff-redis", title: "Hand-off", concs: []int{16},
		contenders: []contender{{name: "baton Locker"}, {name: "redislock"}}}
	hres := result{cmp: h, cells: []cell{{conc: 16, samples: [][]sample{{mk(3, time.Millisecond)}, {mk(3, 50*time.Millisecond)}}}}}
	dir := t.TempDir()
	rep := report{started: time.Now(), rounds: 3, d: time.Second, handoff: time.Second, results: []result{res, hres},
		sched: &schedResult{jobs: []int{10000}, impls: []string{batonOn("Redis"), gocronName}, instances: []int{1, 3},
			ticks: map[string][]tickSample{
				schedKey(batonOn("Redis"), 10000, 1): {{toLast: 40 * time.Millisecond, cpu: 30 * time.Millisecond, claims: 10000}},
				schedKey(batonOn("Redis"), 10000, 3): {{toLast: 90 * time.Millisecond, cpu: 60 * time.Millisecond, claims: 10000}},
				schedKey(gocronName, 10000, 1):       {{toLast: 60 * time.Millisecond, cpu: 50 * time.Millisecond, claims: 10000}},
				schedKey(gocronName, 10000, 3):       {{toLast: 80 * time.Millisecond, cpu: 50 * time.Millisecond, claims: 10300}},
			},
			lateness:   map[int][]time.Duration{10000: {time.Millisecond, 2 * time.Millisecond, 7 * time.Millisecond}},
			idleCPU:    map[int]time.Duration{10000: 3 * time.Millisecond},
			idleWindow: 10 * time.Second,
		}}
	if err := rep.write(dir, filepath.Join(dir, "benchmarks.md")); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 16 | baton provider | 1000 |",
		"| Test locks: baton provider ÷ redislock | ≥ 1.05 | 1.00 | 1.00 | **missed** |",
		"| 10000 | 1 | baton scheduler, Redis | 40.00 ms | 30.00 ms | 0 |",
		"| 10000 | 3 | gocron v2 + redislock, Redis | 80.00 ms | 50.00 ms | 300 |",
		"| Scheduler, 10000 jobs, baton scheduler, Redis: tick → last claim, one instance | ≤ 100 ms | 40.00 ms | – | met |",
		"| Scheduler, 10000 jobs, baton scheduler, Redis: three instances ÷ one | ≤ 2.00 | 2.25 (90.00 ms vs 40.00 ms) | – | **missed** |",
		"| Scheduler, 10000 jobs: tick → last claim, baton vs gocron (Redis) | ahead | 40.00 ms vs 60.00 ms | – | met |",
		"| Scheduler, 10000 jobs: tick lateness, worst of 3 ticks | ≤ 5.00 ms | 7.00 ms | – | **missed** |",
		"| 10000 | 3 | 2.00 ms | 7.00 ms | 3.00 ms |",
		"![hand-off latency distribution](bench/handoff-latency.svg)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"lock-test.svg", "handoff-latency.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, "bench", f))
		if err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: not an SVG (err %v)", f, err)
		}
	}
}

// The Redlock comparison runs both libraries, without errors, on masters
// of its own.
func TestRedlockComparison(t *testing.T) {
	ctx := context.Background()
	masters, stop, err := redlockMasters(ctx, "", 5, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := redlockComparison(&env{prefix: testenv.Prefix(t), concs: []int{1, 2}}, masters)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.run(ctx, slog.New(slog.DiscardHandler), 1, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.contenders) != 4 || len(c.ratios) != 2 || len(res.cells) != 2 {
		t.Fatalf("%d contenders, %d ratios, %d cells", len(c.contenders), len(c.ratios), len(res.cells))
	}
	for _, cl := range res.cells {
		for i, k := range c.contenders {
			if st := cl.stats(i); st.opsPerSec == 0 || st.errs > 0 {
				t.Errorf("conc %d, %s: %.0f ops/s, %d errors", cl.conc, k.name, st.opsPerSec, st.errs)
			}
		}
		for _, r := range c.ratios {
			if v := cl.ratio(c, r); v <= 0 {
				t.Errorf("conc %d, %s ÷ %s = %v", cl.conc, r.num, r.den, v)
			}
		}
	}
}
