package browsertest

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-go/baton/status"
	"github.com/baton-go/baton/status/internal/synth"
)

// TestWeek measures the page on 100 jobs with a week of one-minute ticks
// (about a million runs, three replicas, failures and missed ticks) in the
// memory provider: the server's time for the timeline response and the
// browser's time to draw it, for the default page of 20 jobs and for all
// 100 at once. It reports figures and asserts only that the drawing is
// complete. Behind -week: building the history takes a while.
func TestWeek(t *testing.T) {
	if !*week {
		t.Skip("measurement: run with -week")
	}
	end := time.Now()
	built := time.Now()
	p, err := synth.Week(100, time.Minute, 7*24*time.Hour, end)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("history of 100 jobs × 1 week built in %v", time.Since(built).Round(time.Millisecond))
	h, err := status.New(status.Config{Backends: []status.Backend{{Name: "memory", Provider: p}}, Refresh: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	bctx := browser(t)
	for _, limit := range []int{20, 100} {
		for i := range 3 {
			do(t, bctx, chromedp.Navigate("about:blank"))
			start := time.Now()
			open(t, bctx, srv.URL+"/#timeline?range=604800000&limit="+strconv.Itoa(limit)+"&n="+strconv.Itoa(i), "timeline") // n: a new page each time
			total := time.Since(start)
			got := get(t, bctx, chromedp.Evaluate[struct {
				Server, Render string
				Jobs, Rects    int
			}](`({Server: document.getElementById("timeline").dataset.serverMs, Render: document.getElementById("timeline").dataset.renderMs,
				Jobs: document.querySelectorAll("#timeline g.job").length, Rects: document.querySelectorAll("#timeline rect").length})`))
			if got.Jobs != limit {
				t.Fatalf("%d jobs drawn, want %d", got.Jobs, limit)
			}
			t.Logf("jobs=%d: server %s ms, render %s ms, %d SVG rects, navigation to drawn %v", limit, got.Server, got.Render, got.Rects, total.Round(time.Millisecond))
		}
	}
}
