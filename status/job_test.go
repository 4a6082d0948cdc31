package status_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/status"
)

// operatorPage is a memory backend with five locked jobs on two
// replicas, each ticking every minute for the last ten: "ok" succeeds,
// "fails" fails, "boom" panics (with a stack), "held" is paused
// cluster-wide and "local" is paused on both replicas' instances.
func operatorPage(t *testing.T) (*memory.Provider, http.Handler, time.Time) {
	t.Helper()
	ctx := t.Context()
	now := time.Now()
	var clock time.Time // each run starts a second after its tick
	p := newMemory(t, &memory.Config{Now: func() time.Time {
		if clock.IsZero() {
			return time.Now()
		}
		return clock
	}})
	specs := []batontype.JobSpec{}
	for _, name := range []string{"ok", "fails", "boom", "held", "local"} {
		specs = append(specs, batontype.JobSpec{Name: name, Schedule: "@every 1m0s", Locked: true, AtMostFor: 30 * time.Second})
	}
	for _, r := range []string{"app-1", "app-2"} {
		js := make([]batontype.JobSpec, len(specs))
		copy(js, specs)
		js[4].Options = []string{"paused"}
		if err := p.Register(ctx, batontype.Instance{LockedBy: r, Started: now.Add(-10 * time.Minute), Jobs: js}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	for i := 9; i >= 1; i-- {
		tick := now.Truncate(time.Minute).Add(-time.Duration(i) * time.Minute)
		for _, name := range []string{"ok", "fails", "boom"} {
			owner := lockprovider.NewOwner()
			clock = tick.Add(time.Second)
			l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: 30 * time.Second, Tick: tick, LockedBy: "app-1"}, lockprovider.RunStart{})
			if err != nil {
				t.Fatal(err)
			}
			end := lockprovider.RunEnd{Run: batontype.RunRecord{Job: name, Token: l.Token, Tick: tick, LockedBy: "app-1", Started: l.GrantedAt},
				Outcome: batontype.OutcomeSucceeded, Elapsed: time.Second}
			switch name {
			case "fails":
				end.Outcome, end.Error = batontype.OutcomeFailed, "attempt 3 of 3: upstream said 503\nretry-after: 30s"
			case "boom":
				end.Outcome, end.Error, end.Stack = batontype.OutcomePanicked, "scheduler: job panicked: nil map", "goroutine 9 [running]:\nmain.boom()\n\t/src/boom.go:7"
			}
			if err := p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}, end); err != nil {
				t.Fatal(err)
			}
		}
	}
	clock = time.Time{}
	if err := p.SetPaused(ctx, "held", true); err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: p, Source: "this process", Control: status.ProviderControl(p, "test")}}, Actions: true})
	if err != nil {
		t.Fatal(err)
	}
	return p, h, now
}

// Paused jobs have the state paused in the Jobs view, and their ticks
// are paused in the timeline, never missed; the others' states come from
// their latest due tick.
func TestPausedJobs(t *testing.T) {
	t.Parallel()
	_, h, now := operatorPage(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, "/api/jobs", nil))
	var jobs struct {
		Jobs []struct {
			Name, State, Paused string
			PausedOn            []string `json:"paused_on"`
			Replicas            []string
			Instances           int
		}
		Sources []struct {
			Backend, Source string
			Unknown         bool
		}
	}
	decodeRecorder(t, rec, &jobs)
	got := map[string]string{}
	for _, j := range jobs.Jobs {
		got[j.Name] = j.State + "/" + j.Paused
		if len(j.Replicas) != 2 || j.Instances != 2 {
			t.Errorf("%s: replicas %v of %d instances", j.Name, j.Replicas, j.Instances)
		}
	}
	want := map[string]string{"ok": "ok/", "fails": "failed/", "boom": "failed/", "held": "paused/cluster", "local": "paused/replicas"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("job states %v, want %v", got, want)
	}
	if len(jobs.Sources) != 1 || jobs.Sources[0].Source != "this process" || jobs.Sources[0].Unknown {
		t.Errorf("sources %+v", jobs.Sources)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d", now.Add(-15*time.Minute).UnixMilli(), now.UnixMilli()), nil))
	var tl struct {
		Jobs []struct {
			Job, Paused string
			Missed      []int64
			PausedTicks []int64 `json:"paused_ticks"`
			Counts      map[string]int
		}
	}
	decodeRecorder(t, rec, &tl)
	for _, j := range tl.Jobs {
		paused := j.Job == "held" || j.Job == "local"
		switch {
		case paused && (j.Paused == "" || len(j.Missed) != 0 || len(j.PausedTicks) < 9 || j.Counts["paused"] != len(j.PausedTicks)):
			t.Errorf("paused job %s in the timeline: paused %q, %d missed, %d paused ticks, counts %v", j.Job, j.Paused, len(j.Missed), len(j.PausedTicks), j.Counts)
		case !paused && (j.Paused != "" || len(j.PausedTicks) != 0 || len(j.Missed) != 0):
			t.Errorf("job %s in the timeline: paused %q, missed %v, paused ticks %v", j.Job, j.Paused, j.Missed, j.PausedTicks)
		}
	}
}

// The job page has the job's runs from the ledger, whole errors and the
// stack of a panicked run; an unknown job or backend is 404, for the page
// and for the actions.
func TestJobPage(t *testing.T) {
	t.Parallel()
	_, h, _ := operatorPage(t)
	get := func(url string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, localRequest(http.MethodGet, url, nil))
		return rec
	}
	var page struct {
		Job struct {
			Name, State string
			NextTick    time.Time `json:"next_tick"`
		}
		Source   string
		Runs     []batontype.RunRecord
		Problems []struct{ Kind string }
		Lease    *batontype.LeaseInfo
	}
	decodeRecorder(t, get("/api/job?backend=memory&name=boom"), &page)
	if page.Job.Name != "boom" || page.Job.State != "failed" || page.Job.NextTick.IsZero() || len(page.Runs) != 9 || page.Lease == nil || page.Source != "this process" {
		t.Fatalf("job page of boom: %+v", page)
	}
	if r := page.Runs[0]; r.Outcome != batontype.OutcomePanicked || !strings.HasPrefix(r.Stack, "goroutine 9 [running]:\n") || r.Error != "scheduler: job panicked: nil map" {
		t.Errorf("panicked run %+v", r)
	}
	if len(page.Problems) != 9 {
		t.Errorf("%d problems of the last 24 hours, want 9", len(page.Problems))
	}
	decodeRecorder(t, get("/api/job?backend=memory&name=fails&limit=2"), &page)
	if len(page.Runs) != 2 || page.Runs[0].Error != "attempt 3 of 3: upstream said 503\nretry-after: 30s" {
		t.Errorf("job page of fails: %+v", page.Runs)
	}
	for _, url := range []string{"/api/job?backend=memory&name=nope", "/api/job?backend=nope&name=ok"} {
		if rec := get(url); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d %s, want 404", url, rec.Code, rec.Body)
		}
	}
	if rec := get("/api/job?name=ok"); rec.Code != http.StatusOK {
		t.Errorf("job page without its backend: %d %s", rec.Code, rec.Body)
	}
	if rec := get("/api/job?backend=memory&name=ok&limit=0"); rec.Code != http.StatusBadRequest {
		t.Errorf("limit 0: %d", rec.Code)
	}
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"backend":"memory","job":"nope","action":"run"}`, http.StatusNotFound},
		{`{"backend":"memory","job":"nope","action":"pause"}`, http.StatusNotFound},
		{`{"backend":"nope","job":"ok","action":"run"}`, http.StatusNotFound},
		{`{"backend":"memory","job":"ok","action":"jump"}`, http.StatusBadRequest},
		{`{"backend":"memory","job":"ok","action":"run"}`, http.StatusOK},
	} {
		req := localRequest(http.MethodPost, "/api/actions/job", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.code {
			t.Errorf("POST %s: %d %s, want %d", c.body, rec.Code, rec.Body, c.code)
		}
		if c.code == http.StatusOK && !strings.Contains(rec.Body.String(), `"request_id":"`) {
			t.Errorf("run-now answered %s, want its request id", rec.Body)
		}
	}
}

// A force-release made through the page is recorded by the backend on the
// run it ended, and the job page shows it there: who (the page and the
// connection's peer, not a header the client sets) and when. Only that
// run is marked, and its later end keeps the mark.
func TestForceReleaseRecorded(t *testing.T) {
	t.Parallel()
	p, h, _ := operatorPage(t)
	ctx := t.Context()
	owner := lockprovider.NewOwner()
	l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: "ok", Owner: owner, AtMostFor: time.Minute, LockedBy: "app-2"}, lockprovider.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	req := localRequest(http.MethodPost, "/api/actions/force-release", strings.NewReader(fmt.Sprintf(`{"backend":"memory","name":"ok","token":%d}`, l.Token)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.RemoteAddr = "10.1.2.3:4567"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("force-release: %d %s", rec.Code, rec.Body)
	}
	// The holder notices and ends its run: the mark stays.
	err = p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: "ok", Owner: owner}, lockprovider.RunEnd{
		Run: batontype.RunRecord{Job: "ok", Token: l.Token, LockedBy: "app-2", Started: l.GrantedAt}, Outcome: batontype.OutcomeLockLost, Error: "lock lost"})
	if !errors.Is(err, batontype.ErrNotHeld) {
		t.Fatalf("the old holder's ReleaseRun: %v, want ErrNotHeld", err)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, "/api/job?backend=memory&name=ok", nil))
	var page struct {
		Runs []batontype.RunRecord
	}
	decodeRecorder(t, rec, &page)
	marked := 0
	for _, r := range page.Runs {
		if r.ReleasedAt.IsZero() && r.ReleasedBy == "" {
			continue
		}
		marked++
		if r.Token != l.Token || r.ReleasedBy != "page:10.1.2.3:4567" || r.ReleasedAt.Before(l.GrantedAt) || r.Outcome != batontype.OutcomeLockLost {
			t.Errorf("run on the job page: %+v, want token %d released by page:10.1.2.3:4567 after its grant, lock_lost", r, l.Token)
		}
	}
	if marked != 1 {
		t.Errorf("%d runs on the job page carry a release, want 1: %+v", marked, page.Runs)
	}
	if strings.Contains(rec.Body.String(), `"releases"`) {
		t.Errorf("the job page still has a releases list beside the backend's record: %s", rec.Body)
	}
}

// dead is a backend whose every read fails.
type dead struct{ *memory.Provider }

var errDown = fmt.Errorf("connection refused: %w", batontype.ErrUnavailable)

func (dead) Instances(context.Context) ([]batontype.Instance, error) { return nil, errDown }
func (dead) List(context.Context) ([]batontype.LeaseInfo, error)     { return nil, errDown }
func (dead) ListRates(context.Context) ([]batontype.RateInfo, error) { return nil, errDown }
func (dead) ControlState(context.Context) (batontype.ControlState, error) {
	return batontype.ControlState{}, errDown
}

// A backend that cannot be read is unknown in every view, never empty.
func TestUnknownBackend(t *testing.T) {
	t.Parallel()
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "down", Provider: dead{newMemory(t, nil)}, Source: "nowhere"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, view := range []string{"jobs", "locks", "limits"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, localRequest(http.MethodGet, "/api/"+view, nil))
		var v struct {
			Errors  []struct{ Backend string }
			Sources []struct {
				Backend, Source string
				Unknown         bool
			}
		}
		decodeRecorder(t, rec, &v)
		if len(v.Errors) == 0 || len(v.Sources) != 1 || !v.Sources[0].Unknown || v.Sources[0].Source != "nowhere" {
			t.Errorf("%s of a dead backend: %s", view, rec.Body)
		}
	}
}
