package status_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/status"
	"github.com/baton-go/baton/status/internal/synth"
)

// On a range with more runs than buckets the timeline sends segments
// whose counts add up to the runs the ledger holds in the range, coloured
// by the worst run in them, and the missed ticks of the outage.
func TestTimelineBuckets(t *testing.T) {
	t.Parallel()
	end := time.Now().Truncate(time.Minute)
	p, err := synth.Week(2, time.Minute, 24*time.Hour, end)
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	from := end.Add(-24 * time.Hour)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d&buckets=100", from.UnixMilli(), end.UnixMilli()), nil))
	var tl struct {
		Total int
		Jobs  []struct {
			Job      string
			Mode     string
			Lanes    []string
			Counts   map[string]int
			Segments []struct {
				Lane, B0, B1 int
				Worst        string
				Counts       map[string]int
			}
			MissedSegments []struct {
				B0, B1 int
				Counts map[string]int
			} `json:"missed_segments"`
			Missed []int64
		}
	}
	decodeRecorder(t, rec, &tl)
	if tl.Total != 2 || len(tl.Jobs) != 2 {
		t.Fatalf("%d of %d jobs, want 2", len(tl.Jobs), tl.Total)
	}
	worse := []string{"succeeded", "running", "shut_down", "lock_lost", "unfinished", "failed", "panicked"}
	for _, j := range tl.Jobs {
		if j.Mode != "buckets" || !slices.Equal(j.Lanes, synth.Replicas) {
			t.Fatalf("%s: mode %s lanes %v", j.Job, j.Mode, j.Lanes)
		}
		runs, err := p.Runs(t.Context(), batontype.RunQuery{Job: j.Job, Since: from, Until: end, Limit: batontype.MaxRuns})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		for _, r := range runs {
			want[r.Outcome.String()]++
		}
		got := map[string]int{}
		for _, sg := range j.Segments {
			worst := -1
			for class, n := range sg.Counts {
				got[class] += n
				worst = max(worst, slices.Index(worse, class))
			}
			if sg.B0 > sg.B1 || sg.B1 >= 100 || (worst >= 0 && worse[worst] != sg.Worst) {
				t.Errorf("%s: segment %+v: worst %s", j.Job, sg, sg.Worst)
			}
		}
		for class, n := range want {
			if got[class] != n || j.Counts[class] != n {
				t.Errorf("%s: %s: %d in segments, %d counted, %d in the ledger", j.Job, class, got[class], j.Counts[class], n)
			}
		}
		if want["failed"] == 0 {
			t.Errorf("%s: the history has no failed run: %v", j.Job, want)
		}
		missed := len(j.Missed)
		for _, sg := range j.MissedSegments {
			missed += sg.Counts["missed"]
		}
		// The outage's 20 ticks (19 if it began at the range's first),
		// and the ticks of the last minute or two, which synth leaves
		// unrun and which are due.
		t.Logf("%s: %d missed ticks, runs %v", j.Job, missed, want)
		if missed != j.Counts["missed"] || missed < 19 || missed > 23 {
			t.Errorf("%s: %d missed ticks drawn, %d counted, want the outage's 19-20 plus the last 1-3", j.Job, missed, j.Counts["missed"])
		}
	}
}

func decodeRecorder(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatal(err)
	}
}

// A range that starts inside an outage marks the outage's ticks missed
// when the job ran before the range, even though the live instances
// started after the outage; ticks before the job's first run are not.
func TestTimelineOutageAtStart(t *testing.T) {
	t.Parallel()
	m := newMinuteJob(t)
	tick := m.tick
	m.ran(t, 2, 3, 4, 10, 11, 12) // ran at ticks 2-4, down for 5-9, back from 10
	h := m.handler(t, tick(10))
	for _, c := range []struct {
		from, to int
		want     []int
	}{
		{6, 12, []int{6, 7, 8, 9}}, // the range starts in the outage
		{0, 12, []int{5, 6, 7, 8, 9}},
		{0, 3, nil}, // before the first run nothing is known
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d", tick(c.from).UnixMilli(), tick(c.to).Add(30*time.Second).UnixMilli()), nil))
		var tl struct{ Jobs []struct{ Missed []int64 } }
		decodeRecorder(t, rec, &tl)
		var want []int64
		for _, i := range c.want {
			want = append(want, tick(i).UnixMilli())
		}
		if len(tl.Jobs) != 1 || !slices.Equal(tl.Jobs[0].Missed, want) {
			t.Errorf("ticks %d-%d: missed %+v, want ticks %v", c.from, c.to, tl.Jobs, c.want)
		}
	}
}

// A tick at the range's end whose run started a second after it, within
// the grace, is claimed, not missed; the run itself is outside the range
// and not drawn.
func TestTimelineTickAtRangeEnd(t *testing.T) {
	t.Parallel()
	m := newMinuteJob(t)
	tick := m.tick
	m.ran(t, 0, 1, 2, 3) // each run starts 1 s after its tick
	h := m.handler(t, tick(0))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d", tick(0).UnixMilli(), tick(3).UnixMilli()), nil))
	var tl struct {
		Jobs []struct {
			Missed []int64
			Runs   []struct{ Tick int64 }
		}
	}
	decodeRecorder(t, rec, &tl)
	if len(tl.Jobs) != 1 || len(tl.Jobs[0].Missed) != 0 || len(tl.Jobs[0].Runs) != 3 {
		t.Errorf("ticks 0-3, the range ending at tick 3: %+v; want no missed tick and the runs of ticks 0-2", tl.Jobs)
	}
}

// A run whose replica died is drawn unfinished up to when its lease ran
// out, not growing to now, and the same replica's later runs after it.
func TestTimelineDeadRunEndsWithItsLease(t *testing.T) {
	t.Parallel()
	m := newMinuteJob(t)
	tick := m.tick
	m.ran(t, 1)
	m.clock = tick(2).Add(time.Second) // the run of tick 2 starts, and its replica dies
	if _, err := m.p.AcquireRun(t.Context(), lockprovider.AcquireParams{Name: "export", Owner: lockprovider.NewOwner(), AtMostFor: 30 * time.Second,
		Tick: tick(2), LockedBy: "app-1"}, lockprovider.RunStart{}); err != nil {
		t.Fatal(err)
	}
	m.clock = time.Time{}
	m.ran(t, 3) // restarted under the same name
	h := m.handler(t, tick(0))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d", tick(0).UnixMilli(), tick(4).UnixMilli()), nil))
	var tl struct {
		Jobs []struct {
			Runs []struct {
				Tick, Start, End int64
				LeaseEnd         int64 `json:"lease_end"`
				Outcome          string
				Lane             int
			}
		}
	}
	decodeRecorder(t, rec, &tl)
	if len(tl.Jobs) != 1 || len(tl.Jobs[0].Runs) != 3 {
		t.Fatalf("timeline %+v: want the runs of ticks 1-3", tl.Jobs)
	}
	dead, next := tl.Jobs[0].Runs[1], tl.Jobs[0].Runs[2]
	if dead.Outcome != "unfinished" || dead.End != 0 || dead.LeaseEnd != tick(2).Add(31*time.Second).UnixMilli() {
		t.Errorf("dead run %+v: want unfinished, its lease ending at its grant plus AtMostFor", dead)
	}
	if next.Lane != dead.Lane || next.Start <= dead.LeaseEnd {
		t.Errorf("the replica's next run %+v overlaps the dead one %+v", next, dead)
	}
}

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Once resumed, a job's unclaimed ticks within the cluster-wide pause the
// backend remembers are drawn as paused ticks, never missed; those before
// and after the pause are missed.
func TestTimelineResumedPause(t *testing.T) {
	t.Parallel()
	m := newMinuteJob(t)
	tick := m.tick
	m.ran(t, 0, 1, 2) // ran at ticks 0-2, then nothing
	// Paused cluster-wide from before tick 4 to after tick 8.
	for _, c := range []struct {
		at     time.Time
		paused bool
	}{{tick(4).Add(-30 * time.Second), true}, {tick(8).Add(30 * time.Second), false}} {
		m.clock = c.at
		if err := m.p.SetPaused(t.Context(), "export", c.paused); err != nil {
			t.Fatal(err)
		}
	}
	h := m.handler(t, tick(10))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d", tick(0).UnixMilli(), tick(12).Add(30*time.Second).UnixMilli()), nil))
	var tl struct {
		Jobs []struct {
			Paused      string
			Missed      []int64
			PausedTicks []int64 `json:"paused_ticks"`
			Counts      map[string]int
		}
	}
	decodeRecorder(t, rec, &tl)
	ms := func(is ...int) []int64 {
		var out []int64
		for _, i := range is {
			out = append(out, tick(i).UnixMilli())
		}
		return out
	}
	if len(tl.Jobs) != 1 {
		t.Fatalf("jobs %+v, want one", tl.Jobs)
	}
	j := tl.Jobs[0]
	if want := ms(4, 5, 6, 7, 8); !slices.Equal(j.PausedTicks, want) || j.Counts["paused"] != len(want) {
		t.Errorf("paused ticks %v (counted %d), want %v", j.PausedTicks, j.Counts["paused"], want)
	}
	if want := ms(3, 9, 10, 11, 12); !slices.Equal(j.Missed, want) || j.Counts["missed"] != len(want) {
		t.Errorf("missed ticks %v (counted %d), want %v", j.Missed, j.Counts["missed"], want)
	}
	if j.Paused != "" {
		t.Errorf("a resumed job is shown paused %q", j.Paused)
	}
}

// minuteJob is a memory backend whose clock the test sets (zero: the
// real clock) and the locked job "export", ticking every minute since
// base, about an hour ago.
type minuteJob struct {
	p     *memory.Provider
	base  time.Time
	clock time.Time
}

func newMinuteJob(t *testing.T) *minuteJob {
	m := &minuteJob{base: time.Now().Add(-time.Hour).Truncate(time.Minute)}
	m.p = newMemory(t, &memory.Config{Now: func() time.Time {
		if m.clock.IsZero() {
			return time.Now()
		}
		return m.clock
	}})
	return m
}

func (m *minuteJob) tick(i int) time.Time { return m.base.Add(time.Duration(i) * time.Minute) }

// ran records a succeeded run of each tick i, from 1s to 3s after it.
func (m *minuteJob) ran(t *testing.T, ticks ...int) {
	t.Helper()
	ctx := t.Context()
	for _, i := range ticks {
		m.clock = m.tick(i).Add(time.Second)
		owner := lockprovider.NewOwner()
		l, err := m.p.AcquireRun(ctx, lockprovider.AcquireParams{Name: "export", Owner: owner, AtMostFor: 30 * time.Second, Tick: m.tick(i), LockedBy: "app-1"}, lockprovider.RunStart{})
		if err != nil {
			t.Fatal(err)
		}
		m.clock = m.clock.Add(2 * time.Second)
		if err := m.p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: "export", Owner: owner}, lockprovider.RunEnd{
			Run: batontype.RunRecord{Job: "export", Token: l.Token, Tick: m.tick(i), LockedBy: "app-1", Started: l.GrantedAt}, Outcome: batontype.OutcomeSucceeded,
		}); err != nil {
			t.Fatal(err)
		}
	}
	m.clock = time.Time{}
}

// handler registers a live instance of the job started at started, on
// the real clock, and returns the status handler of the backend.
func (m *minuteJob) handler(t *testing.T, started time.Time) http.Handler {
	t.Helper()
	m.clock = time.Time{}
	spec := batontype.JobSpec{Name: "export", Schedule: "@every 1m0s", Locked: true, AtMostFor: 30 * time.Second}
	if err := m.p.Register(t.Context(), batontype.Instance{LockedBy: "app-1", Started: started, Jobs: []batontype.JobSpec{spec}}, time.Hour); err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: m.p}}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// problems=1 keeps the jobs with a missed tick or a bad run in the range,
// counts them in Total and pages through them; the others are left out.
func TestTimelineProblems(t *testing.T) {
	t.Parallel()
	end := time.Now().Truncate(time.Minute)
	p, err := synth.Week(20, time.Minute, 6*time.Hour, end)
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	// An hour that ends before the synthetic history's last ticks, which
	// are missed for every job: a job has problems there when its outage
	// or one of its failed runs falls in the hour.
	to := end.Add(-10 * time.Minute)
	get := func(extra string) (total int, jobs []string, counts []map[string]int) {
		t.Helper()
		rec := httptest.NewRecorder()
		// The first of two values counts: extra's limit before the default.
		h.ServeHTTP(rec, localRequest(http.MethodGet, fmt.Sprintf("/api/timeline?from=%d&to=%d%s&limit=200", to.Add(-time.Hour).UnixMilli(), to.UnixMilli(), extra), nil))
		var tl struct {
			Total int
			Jobs  []struct {
				Job    string
				Counts map[string]int
			}
		}
		decodeRecorder(t, rec, &tl)
		for _, j := range tl.Jobs {
			jobs, counts = append(jobs, j.Job), append(counts, j.Counts)
		}
		return tl.Total, jobs, counts
	}
	_, all, counts := get("")
	var want []string
	for i, c := range counts {
		if c["missed"]+c["failed"]+c["panicked"]+c["lock_lost"]+c["unfinished"] > 0 {
			want = append(want, all[i])
		}
	}
	if len(want) == 0 || len(want) == len(all) {
		t.Fatalf("%d of %d jobs with problems in the hour; the test needs some of each: %v", len(want), len(all), counts)
	}
	if total, got, _ := get("&problems=1"); total != len(want) || !slices.Equal(got, want) {
		t.Errorf("problems=1: %d jobs %v; want %d %v", total, got, len(want), want)
	}
	if total, got, _ := get("&problems=1&offset=1&limit=2"); total != len(want) || !slices.Equal(got, want[1:min(3, len(want))]) {
		t.Errorf("problems=1, second page of 2: %d jobs %v; want %d %v", total, got, len(want), want[1:min(3, len(want))])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest(http.MethodGet, "/api/timeline?problems=yes", nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("problems=yes: %d %s; want 400", rec.Code, rec.Body)
	}
}
