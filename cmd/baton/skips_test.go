package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/status"
)

// jobs skips and the status page show the skipped ticks each replica
// published, stored by the real backends, per job and replica, with the
// latest; a job nobody skipped is not listed.
func TestCLISkips(t *testing.T) {
	t.Parallel()
	tick := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := t.Context()
			reg := s.p.(lockprovider.Registry)
			spec := func(name string, sk *batontype.Skips) batontype.JobSpec {
				return batontype.JobSpec{Name: name, Schedule: "@every 1m0s", Locked: true, AtMostFor: time.Hour, Skips: sk}
			}
			r1 := []batontype.JobSpec{
				spec("export", &batontype.Skips{Held: 7, StillRunning: 2, Last: batontype.Skip{Tick: tick, Reason: batontype.SkipStillRunning}}),
				spec("quiet", nil),
			}
			r2 := []batontype.JobSpec{
				spec("export", &batontype.Skips{Held: 3, Paused: 1, Last: batontype.Skip{Tick: tick.Add(-time.Minute), Reason: batontype.SkipHeld, Holder: "r1"}}),
				spec("quiet", nil),
			}
			for name, jobs := range map[string][]batontype.JobSpec{"r1": r1, "r2": r2} {
				if err := reg.Register(ctx, batontype.Instance{LockedBy: name, Started: time.Now(), Jobs: jobs}, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			var got []struct {
				Job      string `json:"job"`
				LockedBy string `json:"locked_by"`
				batontype.Skips
			}
			if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "skips", "-o", "json"}, s.args...)...)), &got); err != nil {
				t.Fatal(err)
			}
			want := "[{export r1 {7 0 2 0 0 {2026-12-07 03:00:00 +0000 UTC still_running }}} {export r2 {3 0 0 1 0 {2026-12-07 02:59:00 +0000 UTC held r1}}}]"
			if g := fmt.Sprint(got); g != want {
				t.Errorf("jobs skips -o json:\n got %s\nwant %s", g, want)
			}
			out := wantCode(t, exitOK, "", append([]string{"jobs", "skips", "export"}, s.args...)...)
			if !strings.Contains(out, "still_running at tick 2026-12-07T03:00:00") || !strings.Contains(out, "(held by r1)") || strings.Contains(out, "quiet") {
				t.Errorf("jobs skips export:\n%s", out)
			}
			if out := wantCode(t, exitOK, "", append([]string{"jobs", "skips", "quiet"}, s.args...)...); strings.Contains(out, "quiet") {
				t.Errorf("jobs skips quiet lists a job no replica skipped:\n%s", out)
			}
			wantCode(t, exitNotFound, "", append([]string{"jobs", "skips", "nosuch"}, s.args...)...)
			wantCode(t, exitUsage, "", append([]string{"jobs", "skips", ""}, s.args...)...)

			// The job page has the same counts.
			h, err := status.New(&status.Config{Backends: []status.Backend{{Name: s.name, Provider: s.p}}})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/job?backend="+s.name+"&name=export", nil))
			var page struct {
				Job struct {
					Skips []struct {
						LockedBy string `json:"locked_by"`
						batontype.Skips
					}
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			wantPage := "[{r1 {7 0 2 0 0 {2026-12-07 03:00:00 +0000 UTC still_running }}} {r2 {3 0 0 1 0 {2026-12-07 02:59:00 +0000 UTC held r1}}}]"
			if g := fmt.Sprint(page.Job.Skips); g != wantPage {
				t.Errorf("job page skips:\n got %s\nwant %s", g, wantPage)
			}
		})
	}
}
