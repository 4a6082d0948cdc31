package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// throughputChart draws ops/s by concurrency, one bar per contender.
func throughputChart(res result, file string) error {
	p := plot.New()
	p.Title.Text = res.cmp.title
	p.Y.Label.Text = "operations per second (median of rounds)"
	p.X.Label.Text = "concurrent goroutines"
	n := len(res.cmp.contenders)
	width := vg.Points(min(18, 90/float64(n)))
	var names []string
	for _, cl := range res.cells {
		names = append(names, strconv.Itoa(cl.conc))
	}
	for i, k := range res.cmp.contenders {
		vals := make(plotter.Values, len(res.cells))
		for j, cl := range res.cells {
			vals[j] = cl.stats(i).opsPerSec
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = 0
		bars.Color = plotutil.Color(i)
		bars.Offset = width * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
		p.Legend.Add(k.name, bars)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.NominalX(names...)
	p.Y.Min = 0
	return p.Save(7*vg.Inch, 4*vg.Inch, file)
}

// latencyChart draws the distribution (CDF) of hand-off latencies, all
// rounds pooled, on a logarithmic time axis.
func latencyChart(res result, file string) error {
	p := plot.New()
	p.Title.Text = "Hand-off latency, release → next grant (16 waiters)"
	p.X.Label.Text = "milliseconds (log scale)"
	p.Y.Label.Text = "fraction of hand-offs at most this long"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	cl := res.cells[0]
	for i, k := range res.cmp.contenders {
		var all []time.Duration
		for _, s := range cl.samples[i] {
			all = append(all, s.lat...)
		}
		if len(all) == 0 {
			continue
		}
		slices.Sort(all)
		pts := make(plotter.XYs, 0, 200)
		step := max(len(all)/200, 1)
		for j := 0; j < len(all); j += step {
			pts = append(pts, plotter.XY{X: max(float64(all[j])/1e6, 1e-3), Y: float64(j+1) / float64(len(all))})
		}
		pts = append(pts, plotter.XY{X: max(float64(all[len(all)-1])/1e6, 1e-3), Y: 1})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (median %s)", k.name, fmtDur(quantile(all, 0.5))), l)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p.Save(7*vg.Inch, 4*vg.Inch, file)
}
