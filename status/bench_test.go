package status_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/baton-go/baton/status/internal/synth"
)

// BenchmarkTimelineWeek measures the timeline endpoint on 100 jobs with a
// week of one-minute ticks (about a million runs) in the memory
// provider: reading the runs, finding missed ticks, laying out buckets
// and encoding, for a page of 20 jobs, for all 100 at once, and for a
// page of 20 of the jobs with problems (problems=1 reads all 100). The
// memory provider's reads are the cheapest of all backends; the
// difference to Redis or PostgreSQL is their transfer of the same runs.
func BenchmarkTimelineWeek(b *testing.B) {
	end := time.Now()
	h, err := synth.WeekPage(100, end)
	if err != nil {
		b.Fatal(err)
	}
	from := end.Add(-7 * 24 * time.Hour)
	for _, c := range []struct {
		limit    int
		problems string
	}{{20, ""}, {100, ""}, {20, "&problems=1"}} {
		b.Run(fmt.Sprintf("jobs=%d%s", c.limit, c.problems), func(b *testing.B) {
			url := fmt.Sprintf("/api/timeline?from=%d&to=%d&buckets=400&limit=%d%s", from.UnixMilli(), end.UnixMilli(), c.limit, c.problems)
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, localRequest(http.MethodGet, url, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/response")
		})
	}
}
