package browsertest

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-go/baton/status/internal/synth"
)

// BenchmarkWeek measures the page in Chromium on 100 jobs with a week of
// one-minute ticks (about a million runs, three replicas, failures and
// missed ticks) in the memory provider: each iteration loads the page on
// the whole week and waits until the timeline is drawn (ns/op), for the
// default page of 20 jobs and for all 100. server-ms is the handler's
// time for the timeline response, render-ms the browser's time to draw
// it. Building the history takes a while before the first iteration.
func BenchmarkWeek(b *testing.B) {
	end := time.Now()
	h, err := synth.WeekPage(100, end)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	bctx := browser(b)
	for _, limit := range []int{20, 100} {
		b.Run(fmt.Sprintf("jobs=%d", limit), func(b *testing.B) {
			var server, render float64
			var rects int
			n := 0
			for b.Loop() {
				b.StopTimer()
				do(b, bctx, chromedp.Navigate("about:blank"))
				b.StartTimer()
				open(b, bctx, srv.URL+"/#timeline?range=604800000&limit="+strconv.Itoa(limit), "timeline")
				got := get(b, bctx, chromedp.Evaluate[struct {
					Server, Render string
					Jobs, Rects    int
				}](`({Server: document.getElementById("timeline").dataset.serverMs, Render: document.getElementById("timeline").dataset.renderMs,
					Jobs: document.querySelectorAll("#timeline g.job").length, Rects: document.querySelectorAll("#timeline rect").length})`))
				if got.Jobs != limit {
					b.Fatalf("%d jobs drawn, want %d", got.Jobs, limit)
				}
				s, _ := strconv.ParseFloat(got.Server, 64)
				r, _ := strconv.ParseFloat(got.Render, 64)
				server, render, rects, n = server+s, render+r, got.Rects, n+1
			}
			b.ReportMetric(server/float64(n), "server-ms")
			b.ReportMetric(render/float64(n), "render-ms")
			b.ReportMetric(float64(rects), "rects")
		})
	}
}
