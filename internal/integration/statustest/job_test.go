package statustest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/status"
)

// On Redis and on PostgreSQL, with real schedulers: the job page shows a
// panicked run's stack as the ledger stored it, a failed run's whole
// error, and a job paused cluster-wide is paused in the Jobs view and in
// the timeline, with no missed tick.
func TestJobPageOnBackends(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var p interface {
				lockprovider.Provider
				lockprovider.Control
			}
			if name == "redis" {
				rp, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
				if err != nil {
					t.Fatal(err)
				}
				p = rp
			} else {
				pp, err := pgprovider.New(pgenv.Schema(t).Pool, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := pp.Migrate(t.Context()); err != nil {
					t.Fatal(err)
				}
				p = pp
			}
			testJobPage(t, name, p)
		})
	}
}

func testJobPage(t *testing.T, name string, p interface {
	lockprovider.Provider
	lockprovider.Control
}) {
	ctx := t.Context()
	if err := p.SetPaused(ctx, "held", true); err != nil {
		t.Fatal(err)
	}
	longErr := "upstream said 503\n" + strings.Repeat("x", 300)
	s, err := scheduler.New(p, &scheduler.Config{LockedBy: "app-1", Ledger: true, RegistryTTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for job, fn := range map[string]scheduler.Func{
		"boom":  func(context.Context, scheduler.Run) error { panic("nil map") },
		"fails": func(context.Context, scheduler.Run) error { return errors.New(longErr) },
		"held":  func(context.Context, scheduler.Run) error { return nil },
	} {
		if _, err := s.Every(time.Second).Locked(job, scheduler.AtMostFor(10*time.Second)).Do(fn); err != nil {
			t.Fatal(err)
		}
	}
	// An unlocked job that fails: its replica's latest run is in the
	// registry, and the job is failed.
	if _, err := s.Every(time.Second).Do(func(context.Context, scheduler.Run) error { return errors.New("disk full") }); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: name, Provider: p}}, Grace: time.Second, Refresh: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// The jobs run every second. The pages are read until they show what
	// the runs left (the paused job needs two ticks in the timeline), for
	// at most pagesWait; the problems of the last reading are the test's.
	deadline := time.Now().Add(pagesWait)
	for {
		problems := readJobPages(t, srv.URL, name, longErr)
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
}

// pagesWait bounds the wait for the pages of testJobPage: a few ticks of
// one second, and more on a loaded machine.
const pagesWait = 20 * time.Second

// readJobPages reads the job, jobs and timeline pages of testJobPage and
// returns what they show wrong (nothing once the runs are in).
func readJobPages(t *testing.T, url, name, longErr string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	// A page that is not there yet (the scheduler has not registered its
	// jobs) is one more thing to wait for.
	get := func(url string, v any) bool {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			bad("GET %s: %s %s", url, resp.Status, body)
			return false
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, body)
		}
		return true
	}

	var page struct {
		Job  struct{ State string }
		Runs []batontype.RunRecord
	}
	if !get(url+"/api/job?backend="+name+"&name=boom", &page) {
		return problems
	}
	var stack string
	for _, r := range page.Runs {
		if r.Outcome == batontype.OutcomePanicked {
			stack = r.Stack
		}
	}
	if page.Job.State != "failed" || !strings.HasPrefix(stack, "goroutine ") || !strings.Contains(stack, "job_test.go") || len(stack) > batontype.MaxRunStack {
		bad("job page of boom: state %s, %d runs, stack %.200q", page.Job.State, len(page.Runs), stack)
	}
	if !get(url+"/api/job?backend="+name+"&name=fails", &page) {
		return problems
	}
	if len(page.Runs) == 0 || (page.Runs[0].Error != longErr && (len(page.Runs) < 2 || page.Runs[1].Error != longErr)) {
		bad("job page of fails: %+v", page.Runs)
	}
	var jobs struct {
		Jobs []struct {
			Name, State, Paused string
			Locked              bool
			ReplicaRuns         []batontype.RunRecord `json:"replica_runs"`
		}
	}
	if !get(url+"/api/jobs", &jobs) {
		return problems
	}
	states := map[string]string{}
	for _, j := range jobs.Jobs {
		states[j.Name] = j.State + "/" + j.Paused
		if !j.Locked && (j.State != "failed" || len(j.ReplicaRuns) != 1 || j.ReplicaRuns[0].LockedBy != "app-1" || j.ReplicaRuns[0].Error != "disk full") {
			bad("unlocked job %s: state %s, replica runs %+v", j.Name, j.State, j.ReplicaRuns)
		}
	}
	if states["held"] != "paused/cluster" || states["boom"] != "failed/" || len(states) != 4 {
		bad("job states %v", states)
	}
	now := time.Now()
	var tl struct {
		Jobs []struct {
			Job         string
			Missed      []int64
			PausedTicks []int64 `json:"paused_ticks"`
		}
	}
	if !get(fmt.Sprintf("%s/api/timeline?from=%d&to=%d", url, now.Add(-time.Minute).UnixMilli(), now.UnixMilli()), &tl) {
		return problems
	}
	for _, j := range tl.Jobs {
		if j.Job == "held" && len(j.Missed) != 0 {
			// Wrong whenever seen, however the later readings look.
			t.Errorf("timeline of the paused job: %d missed ticks", len(j.Missed))
		}
		if j.Job == "held" && len(j.PausedTicks) < 2 {
			bad("timeline of the paused job: %d paused ticks, want 2 or more", len(j.PausedTicks))
		}
	}
	return problems
}
