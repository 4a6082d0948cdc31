package status

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler"
)

// Bounds of a timeline request. The page asks for the visible range, one
// bucket per few pixels and one page of jobs; the server draws every run
// when a job has fewer runs than buckets, and otherwise sums the runs per
// bucket and merges neighbouring buckets of the same outcome into
// segments, so a response grows with buckets × lanes, not with runs.
const (
	DefaultBuckets  = 300
	MaxBuckets      = 2000
	DefaultPageJobs = 20
	MaxPageJobs     = 200
	MaxRange        = 92 * 24 * time.Hour
	// maxTicks bounds the ticks examined per job for missed ticks.
	maxTicks = 200_000
)

// Outcome classes of the timeline: the run outcomes, plus "unfinished"
// for a run that never ended although its lease ran out.
const unfinished = "unfinished"

// severity orders classes for a bucket's colour: the worst wins.
var severity = map[string]int{
	lockprovider.OutcomeSucceeded.String(): 0,
	lockprovider.OutcomeRunning.String():   1,
	lockprovider.OutcomeShutDown.String():  2,
	lockprovider.OutcomeLockLost.String():  3,
	unfinished:                             4,
	lockprovider.OutcomeFailed.String():    5,
	lockprovider.OutcomePanicked.String():  6,
}

type timelineJSON struct {
	Now       int64          `json:"now"` // Unix milliseconds, like every time below
	From      int64          `json:"from"`
	To        int64          `json:"to"`
	Buckets   int            `json:"buckets"`
	Total     int            `json:"total"` // jobs matching the filter
	Offset    int            `json:"offset"`
	Jobs      []laneJobJSON  `json:"jobs"`
	Errors    []backendError `json:"errors"`
	ElapsedMS float64        `json:"elapsed_ms"` // server time spent on this response
}

type laneJobJSON struct {
	Backend  string `json:"backend"`
	Job      string `json:"job"`
	Schedule string `json:"schedule"`
	// Mode is "runs" (Runs lists each run) or "buckets" (Segments sums
	// them).
	Mode     string         `json:"mode"`
	Lanes    []string       `json:"lanes"` // replicas, one lane each
	Runs     []runJSON      `json:"runs,omitempty"`
	Segments []segmentJSON  `json:"segments,omitempty"`
	Ticks    []int64        `json:"ticks,omitempty"`  // every tick, when there are at most Buckets
	Missed   []int64        `json:"missed,omitempty"` // missed ticks, when there are at most Buckets
	MissedSg []segmentJSON  `json:"missed_segments,omitempty"`
	Counts   map[string]int `json:"counts"` // per class, plus "missed", "catch_up" and "manual"
}

type runJSON struct {
	Lane    int    `json:"lane"`
	Tick    int64  `json:"tick,omitempty"`
	Start   int64  `json:"start"`
	End     int64  `json:"end,omitempty"` // 0 while running or unfinished
	Outcome string `json:"outcome"`
	Token   int64  `json:"token"`
	Error   string `json:"error,omitempty"`
	CatchUp bool   `json:"catch_up,omitempty"`
	Manual  bool   `json:"manual,omitempty"`
}

// segmentJSON is a span of buckets [B0, B1] of one lane (Lane -1: the
// tick row) with the runs (or missed ticks) that started in it.
type segmentJSON struct {
	Lane   int            `json:"lane"`
	B0     int            `json:"b0"`
	B1     int            `json:"b1"`
	Worst  string         `json:"worst"`
	Counts map[string]int `json:"counts"`
}

type timelineQuery struct {
	from, to        time.Time
	buckets         int
	offset, limit   int
	filter, backend string
}

func parseTimelineQuery(r *http.Request, now time.Time) (timelineQuery, string) {
	q := timelineQuery{to: now, buckets: DefaultBuckets, limit: DefaultPageJobs}
	v := r.URL.Query()
	ms := func(name string, dst *time.Time) string {
		if s := v.Get(name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 {
				return name + " must be a time in Unix milliseconds"
			}
			*dst = time.UnixMilli(n)
		}
		return ""
	}
	num := func(name string, dst *int, lo, hi int) string {
		if s := v.Get(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < lo || n > hi {
				return name + " must be between " + strconv.Itoa(lo) + " and " + strconv.Itoa(hi)
			}
			*dst = n
		}
		return ""
	}
	if msg := ms("to", &q.to); msg != "" {
		return q, msg
	}
	q.from = q.to.Add(-time.Hour)
	for _, msg := range []string{
		ms("from", &q.from),
		num("buckets", &q.buckets, 10, MaxBuckets),
		num("offset", &q.offset, 0, 1<<30),
		num("limit", &q.limit, 1, MaxPageJobs),
	} {
		if msg != "" {
			return q, msg
		}
	}
	if !q.to.After(q.from) || q.to.Sub(q.from) > MaxRange {
		return q, "to must be after from, by at most " + MaxRange.String()
	}
	q.filter, q.backend = v.Get("q"), v.Get("backend")
	return q, ""
}

func (h *handler) timeline(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q, msg := parseTimelineQuery(r, start)
	if msg != "" {
		h.fail(w, http.StatusBadRequest, msg)
		return
	}
	key := "timeline?" + r.URL.RawQuery
	h.cachedView(w, r, key, func(ctx context.Context) any {
		out := h.buildTimeline(ctx, q, start)
		out.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
		return out
	})
}

// timelineJob is a locked job of one backend.
type timelineJob struct {
	b   Backend
	led lockprovider.Ledger
	rj  scheduler.RegisteredJob
}

func (h *handler) buildTimeline(ctx context.Context, q timelineQuery, now time.Time) timelineJSON {
	out := timelineJSON{Now: now.UnixMilli(), From: q.from.UnixMilli(), To: q.to.UnixMilli(), Buckets: q.buckets,
		Offset: q.offset, Jobs: []laneJobJSON{}, Errors: []backendError{}}
	var jobs []timelineJob
	for _, b := range h.cfg.Backends {
		reg, ok1 := b.Provider.(lockprovider.Registry)
		led, ok2 := b.Provider.(lockprovider.Ledger)
		if !ok1 || !ok2 || (q.backend != "" && q.backend != b.Name) {
			continue
		}
		insts, err := reg.Instances(ctx)
		if err != nil {
			h.backendErr(&out.Errors, b, "registry", err)
			continue
		}
		for _, rj := range scheduler.Jobs(insts) {
			if rj.Spec.Locked && (q.filter == "" || strings.Contains(rj.Spec.Name, q.filter)) {
				jobs = append(jobs, timelineJob{b: b, led: led, rj: rj})
			}
		}
	}
	slices.SortFunc(jobs, func(a, b timelineJob) int {
		return cmp.Or(cmp.Compare(a.rj.Spec.Name, b.rj.Spec.Name), cmp.Compare(a.b.Name, b.b.Name))
	})
	out.Total = len(jobs)
	jobs = jobs[min(q.offset, len(jobs)):min(q.offset+q.limit, len(jobs))]
	for _, j := range jobs {
		lj, err := h.laneJob(ctx, j, q, now)
		if err != nil {
			h.backendErr(&out.Errors, j.b, "runs of "+j.rj.Spec.Name, err)
			continue
		}
		out.Jobs = append(out.Jobs, lj)
	}
	return out
}

// laneJob reads the runs of one job that overlap [q.from, q.to] and lays
// them out.
func (h *handler) laneJob(ctx context.Context, j timelineJob, q timelineQuery, now time.Time) (laneJobJSON, error) {
	s := j.rj.Spec
	// A run that started up to AtMostFor before the range may still
	// overlap it.
	runs, err := j.led.Runs(ctx, lockprovider.RunQuery{Job: s.Name, Since: q.from.Add(-s.AtMostFor), Until: q.to, Limit: lockprovider.MaxRuns})
	if err != nil {
		return laneJobJSON{}, err
	}
	autoRenew := slices.Contains(s.Options, "auto_renew")
	// evidence is the earliest time the job is known to have existed: a
	// tick before it is not counted as missed.
	evidence := j.rj.Since
	for _, r := range runs {
		if r.Started.Before(evidence) {
			evidence = r.Started
		}
	}
	if evidence.After(q.from) {
		older, err := j.led.Runs(ctx, lockprovider.RunQuery{Job: s.Name, Until: q.from, Limit: 1})
		if err != nil {
			return laneJobJSON{}, err
		}
		if len(older) > 0 {
			evidence = q.from
		}
	}
	return layout(s, j.b.Name, j.rj.Replicas, runs, evidence, q, now, h.cfg.Grace, autoRenew), nil
}

// layout places runs in lanes and buckets. It only computes.
func layout(s lockprovider.JobSpec, backend string, replicas []string, runs []lockprovider.RunRecord,
	evidence time.Time, q timelineQuery, now time.Time, grace time.Duration, autoRenew bool) laneJobJSON {
	lj := laneJobJSON{Backend: backend, Job: s.Name, Schedule: s.Schedule, Counts: map[string]int{}}
	span := q.to.Sub(q.from)
	bucket := func(t time.Time) int {
		if t.Before(q.from) {
			return 0
		}
		b := int(int64(t.Sub(q.from)) * int64(q.buckets) / int64(span))
		return min(b, q.buckets-1)
	}

	// Lanes: the registered replicas and every replica that ran a run
	// shown, sorted.
	lanes := slices.Clone(replicas)
	kept := runs[:0:0]
	for _, r := range runs {
		end := r.Finished
		if end.IsZero() {
			end = now
		}
		if end.Before(q.from) || !r.Started.Before(q.to) {
			continue
		}
		kept = append(kept, r)
		if !slices.Contains(lanes, r.LockedBy) {
			lanes = append(lanes, r.LockedBy)
		}
	}
	slices.Sort(lanes)
	lj.Lanes = lanes
	lane := func(r lockprovider.RunRecord) int { i, _ := slices.BinarySearch(lanes, r.LockedBy); return i }
	class := func(r lockprovider.RunRecord) string {
		if r.Outcome == lockprovider.OutcomeRunning && !autoRenew && s.AtMostFor > 0 && now.After(r.Started.Add(s.AtMostFor)) {
			return unfinished
		}
		return r.Outcome.String()
	}

	// Ticks, and which of them no run claimed.
	claimed := make(map[int64]bool, len(runs))
	for _, r := range runs {
		if !r.Tick.IsZero() {
			claimed[r.Tick.UnixMilli()] = true
		}
	}
	var ticks, missed []int64
	if sched, err := scheduler.ParseSchedule(s.Schedule, s.TimeZone); err == nil {
		due := now.Add(-grace)
		for t, n := sched.Next(q.from.Add(-time.Nanosecond)), 0; !t.IsZero() && !t.After(q.to) && n < maxTicks; t, n = sched.Next(t), n+1 {
			ms := t.UnixMilli()
			ticks = append(ticks, ms)
			if !claimed[ms] && !t.After(due) && !t.Before(evidence) {
				missed = append(missed, ms)
			}
		}
	}
	lj.Counts["missed"] = len(missed)
	if len(ticks) <= q.buckets {
		lj.Ticks = ticks
	}
	if len(missed) <= q.buckets {
		lj.Missed = missed
	} else {
		counts := make([]map[string]int, q.buckets)
		worst := make([]string, q.buckets)
		for _, ms := range missed {
			b := bucket(time.UnixMilli(ms))
			if counts[b] == nil {
				counts[b] = map[string]int{}
			}
			counts[b]["missed"]++
			worst[b] = "missed"
		}
		lj.MissedSg = segments(-1, worst, counts)
	}

	for _, r := range kept {
		c := class(r)
		lj.Counts[c]++
		if r.CatchUp {
			lj.Counts["catch_up"]++
		}
		if r.Manual {
			lj.Counts["manual"]++
		}
	}
	if len(kept) <= q.buckets {
		lj.Mode = "runs"
		lj.Runs = make([]runJSON, 0, len(kept))
		for i := len(kept) - 1; i >= 0; i-- { // oldest first
			r := kept[i]
			rj := runJSON{Lane: lane(r), Start: r.Started.UnixMilli(), Outcome: class(r), Token: r.Token,
				Error: r.Error, CatchUp: r.CatchUp, Manual: r.Manual}
			if !r.Tick.IsZero() {
				rj.Tick = r.Tick.UnixMilli()
			}
			if !r.Finished.IsZero() {
				rj.End = r.Finished.UnixMilli()
			}
			lj.Runs = append(lj.Runs, rj)
		}
		return lj
	}

	lj.Mode = "buckets"
	for l := range lanes {
		counts := make([]map[string]int, q.buckets)
		worst := make([]string, q.buckets)
		for _, r := range kept {
			if lane(r) != l {
				continue
			}
			c := class(r)
			b0 := bucket(r.Started)
			if counts[b0] == nil {
				counts[b0] = map[string]int{}
			}
			counts[b0][c]++
			if r.CatchUp {
				counts[b0]["catch_up"]++
			}
			if r.Manual {
				counts[b0]["manual"]++
			}
			end := r.Finished
			if end.IsZero() {
				end = now
			}
			for b := b0; b <= bucket(end); b++ { // the run covers these buckets
				if worst[b] == "" || severity[c] > severity[worst[b]] {
					worst[b] = c
				}
			}
		}
		lj.Segments = append(lj.Segments, segments(l, worst, counts)...)
	}
	return lj
}

// segments merges neighbouring buckets of the same worst class.
func segments(lane int, worst []string, counts []map[string]int) []segmentJSON {
	var out []segmentJSON
	for b := 0; b < len(worst); b++ {
		if worst[b] == "" {
			continue
		}
		sg := segmentJSON{Lane: lane, B0: b, B1: b, Worst: worst[b], Counts: map[string]int{}}
		for ; b < len(worst) && worst[b] == sg.Worst; b++ {
			sg.B1 = b
			for k, n := range counts[b] {
				sg.Counts[k] += n
			}
		}
		b--
		out = append(out, sg)
	}
	return out
}
