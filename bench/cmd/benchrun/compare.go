package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// contender is one implementation under comparison.
type contender struct {
	name string
	op   func(ctx context.Context, worker int) error
}

// ratio is a throughput ratio reported for a comparison: num's ops/s over
// den's, per round, median over the rounds. budget, when set, is the least
// acceptable value at concurrency 16.
type ratio struct {
	num, den string
	budget   float64
}

// comparison is a set of contenders measured side by side.
type comparison struct {
	id, title, note string
	contenders      []contender
	ratios          []ratio
	concs           []int
	// server, when set, reads the server's command statistics around
	// each sample (for Redis comparisons with -server-cost).
	server func(ctx context.Context) (map[string]cmdStat, error)
}

// cell is a comparison's result at one concurrency: samples[i][r] is
// contender i in round r.
type cell struct {
	conc    int
	samples [][]sample
}

type result struct {
	cmp   comparison
	cells []cell
}

// run measures every contender at every concurrency, in rounds; within a
// round the contenders take turns in an order that rotates from round to
// round, so drift in the machine's load falls on all of them alike.
func (c comparison) run(ctx context.Context, log *slog.Logger, rounds int, d time.Duration) (result, error) {
	res := result{cmp: c}
	// Warm up: scripts loaded, pools filled.
	for _, k := range c.contenders {
		s := measure(ctx, max(c.concs[len(c.concs)-1], 1), min(d/4, 100*time.Millisecond), k.op)
		if s.ops == 0 && s.firstErr != nil {
			return res, fmt.Errorf("%s/%s: %w", c.id, k.name, s.firstErr)
		}
	}
	for _, conc := range c.concs {
		cl := cell{conc: conc, samples: make([][]sample, len(c.contenders))}
		for r := range rounds {
			for i := range c.contenders {
				k := (i + r) % len(c.contenders)
				var before map[string]cmdStat
				if c.server != nil {
					before, _ = c.server(ctx)
				}
				s := measure(ctx, conc, d, c.contenders[k].op)
				if c.server != nil && s.ops > 0 {
					if after, err := c.server(ctx); err == nil && before != nil {
						s.serverUS, s.calls = serverCost(before, after, s.ops)
					}
				}
				if s.firstErr != nil {
					log.Warn("errors during measurement", "comparison", c.id, "contender", c.contenders[k].name,
						"conc", conc, "errors", s.errs, "first", s.firstErr)
				}
				cl.samples[k] = append(cl.samples[k], s)
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		log.Info("measured", "comparison", c.id, "conc", conc, "summary", cl.summary(c))
		res.cells = append(res.cells, cl)
	}
	return res, nil
}

func (cl cell) index(c comparison, name string) int {
	for i, k := range c.contenders {
		if k.name == name {
			return i
		}
	}
	return -1
}

// ratio is the median over rounds of num's ops/s over den's.
func (cl cell) ratio(c comparison, r ratio) float64 {
	m, _, _ := cl.ratioSpread(c, r)
	return m
}

// ratioSpread is ratio with the least and greatest of the rounds.
func (cl cell) ratioSpread(c comparison, r ratio) (med, lo, hi float64) {
	a, b := cl.index(c, r.num), cl.index(c, r.den)
	if a < 0 || b < 0 {
		return 0, 0, 0
	}
	var xs []float64
	for i := range cl.samples[a] {
		if d := cl.samples[b][i].opsPerSec(); d > 0 {
			xs = append(xs, cl.samples[a][i].opsPerSec()/d)
		}
	}
	if len(xs) == 0 {
		return 0, 0, 0
	}
	return median(xs), slices.Min(xs), slices.Max(xs)
}

// cpuRatio is den's CPU time per operation (this process's plus, when
// measured, the Redis server's) over num's: above 1 means num costs less.
func (cl cell) cpuRatio(c comparison, r ratio) float64 {
	a, b := cl.index(c, r.num), cl.index(c, r.den)
	if a < 0 || b < 0 {
		return 0
	}
	sa, sb := cl.stats(a), cl.stats(b)
	if ca := sa.clientUS + sa.serverUS; ca > 0 {
		return (sb.clientUS + sb.serverUS) / ca
	}
	return 0
}

// stats are the medians over rounds of one contender's figures.
type stats struct {
	opsPerSec, allocs  float64
	serverUS, clientUS float64
	calls              map[string]float64
	p50, p99           time.Duration
	errs               int
}

func (cl cell) stats(i int) stats {
	var ops, allocs, p50, p99, srv, cli []float64
	st := stats{}
	for _, s := range cl.samples[i] {
		ops = append(ops, s.opsPerSec())
		allocs = append(allocs, s.allocsPerOp())
		p50 = append(p50, float64(quantile(s.lat, 0.50)))
		p99 = append(p99, float64(quantile(s.lat, 0.99)))
		st.errs += s.errs
		cli = append(cli, s.clientUS)
		if s.serverUS > 0 {
			srv = append(srv, s.serverUS)
			st.calls = s.calls
		}
	}
	st.serverUS, st.clientUS = median(srv), median(cli)
	st.opsPerSec, st.allocs = median(ops), median(allocs)
	st.p50, st.p99 = time.Duration(median(p50)), time.Duration(median(p99))
	return st
}

func (cl cell) summary(c comparison) string {
	s := ""
	for i, k := range c.contenders {
		s += fmt.Sprintf("%s=%.0f/s ", k.name, cl.stats(i).opsPerSec)
	}
	return s
}
