package status

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/jobstate"
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

// classes lists the timeline's classes from best to worst: a bucket
// takes the colour of its worst run. The last two only count.
var classes = [...]string{
	batontype.OutcomeSucceeded.String(),
	batontype.OutcomeRunning.String(),
	batontype.OutcomeShutDown.String(),
	batontype.OutcomeLockLost.String(),
	unfinished,
	batontype.OutcomeFailed.String(),
	batontype.OutcomePanicked.String(),
	"catch_up",
	"manual",
}

const (
	nOutcomes = 7 // classes[:nOutcomes] are outcomes
	cCatchUp  = 7
	cManual   = 8
	cMissed   = 0 // in the tick row, the only class
)

// classOf returns the index in classes of an outcome.
func classOf(o string) int {
	for i, c := range classes[:nOutcomes] {
		if c == o {
			return i
		}
	}
	return 0
}

// bucketCounts counts per class in one bucket.
type bucketCounts [len(classes)]int32

type timelineJSON struct {
	Now       int64          `json:"now"` // Unix milliseconds, like every time below
	From      int64          `json:"from"`
	To        int64          `json:"to"`
	Buckets   int            `json:"buckets"`
	Total     int            `json:"total"` // jobs matching the filters
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
	Mode     string        `json:"mode"`
	Lanes    []string      `json:"lanes"` // replicas, one lane each
	Runs     []runJSON     `json:"runs,omitempty"`
	Segments []segmentJSON `json:"segments,omitempty"`
	Ticks    []int64       `json:"ticks,omitempty"`  // every tick, when there are at most Buckets
	Missed   []int64       `json:"missed,omitempty"` // missed ticks, when there are at most Buckets
	MissedSg []segmentJSON `json:"missed_segments,omitempty"`
	// Paused is "cluster" or "replicas" for a job paused now (see
	// jobJSON.Paused): its unclaimed ticks since its last claimed one are
	// paused ticks, never missed ones. So are, whether or not it is paused
	// now, its unclaimed ticks within a cluster-wide pause the backend
	// remembers (batontype.ControlState.Pauses).
	Paused   string         `json:"paused,omitempty"`
	PausedT  []int64        `json:"paused_ticks,omitempty"`
	PausedSg []segmentJSON  `json:"paused_segments,omitempty"`
	Counts   map[string]int `json:"counts"` // per class, plus "missed", "catch_up" and "manual"
}

type runJSON struct {
	Lane  int   `json:"lane"`
	Tick  int64 `json:"tick,omitempty"`
	Start int64 `json:"start"`
	End   int64 `json:"end,omitempty"` // 0 while running or unfinished
	// LeaseEnd is, for an unfinished run (its replica died), when its
	// lease ran out at the latest: its bar ends there, not at now, and
	// the replica's later runs are drawn after it. 0 when not known (a
	// job that renews its lease).
	LeaseEnd int64  `json:"lease_end,omitempty"`
	Outcome  string `json:"outcome"`
	Token    int64  `json:"token"`
	Error    string `json:"error,omitempty"`
	CatchUp  bool   `json:"catch_up,omitempty"`
	Manual   bool   `json:"manual,omitempty"`
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
	// problems keeps the jobs with a problem in the range (hasProblem).
	problems bool
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
	switch v.Get("problems") {
	case "", "0":
	case "1":
		q.problems = true
	default:
		return q, "problems must be 1 or 0"
	}
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
	rj  jobstate.RegisteredJob
	// paused is "cluster" or "replicas" when the job is paused now.
	paused string
	// pauses are the job's cluster-wide pause spans the backend remembers.
	pauses []batontype.PauseSpan
}

func (h *handler) buildTimeline(ctx context.Context, q timelineQuery, now time.Time) timelineJSON {
	out := timelineJSON{Now: now.UnixMilli(), From: q.from.UnixMilli(), To: q.to.UnixMilli(), Buckets: q.buckets,
		Offset: q.offset, Jobs: []laneJobJSON{}, Errors: []backendError{}}
	var jobs []timelineJob
	for _, p := range readParts(ctx, h, "", func(ctx context.Context, b Backend) (part[[]timelineJob], bool) {
		return h.timelineJobsOf(ctx, b, q)
	}) {
		jobs = append(jobs, p.items...)
		out.Errors = append(out.Errors, p.errs...)
	}
	slices.SortFunc(jobs, func(a, b timelineJob) int {
		return cmp.Or(cmp.Compare(a.rj.Spec.Name, b.rj.Spec.Name), cmp.Compare(a.b.Name, b.b.Name))
	})
	page := func(n int) (int, int) { return min(q.offset, n), min(q.offset+q.limit, n) }
	if !q.problems {
		out.Total = len(jobs)
		lo, hi := page(len(jobs))
		jobs = jobs[lo:hi]
		out.Jobs = append(out.Jobs, h.laneJobs(ctx, jobs, q, now, &out.Errors)...)
		return out
	}
	// Whether a job had a problem is known only from its runs: every
	// matching job is read, then the page is cut from those that had one.
	// A job whose runs could not be read is reported as an error.
	var bad []laneJobJSON
	for _, l := range h.laneJobs(ctx, jobs, q, now, &out.Errors) {
		if hasProblem(l.Counts) {
			bad = append(bad, l)
		}
	}
	out.Total = len(bad)
	lo, hi := page(len(bad))
	out.Jobs = append(out.Jobs, bad[lo:hi]...)
	return out
}

// timelineJobsOf reads b's locked jobs matching q; false for a backend
// without a registry and a ledger, or not the one q asks for.
func (h *handler) timelineJobsOf(ctx context.Context, b Backend, q timelineQuery) (part[[]timelineJob], bool) {
	var out part[[]timelineJob]
	reg, ok1 := b.Provider.(lockprovider.Registry)
	led, ok2 := b.Provider.(lockprovider.Ledger)
	if !ok1 || !ok2 || (q.backend != "" && q.backend != b.Name) {
		return out, false
	}
	insts, err := reg.Instances(ctx)
	if err != nil {
		h.backendErr(&out.errs, b, "registry", err)
		return out, true
	}
	cs, err := pausedJobs(ctx, b)
	if err != nil {
		// Without the pause flags a paused job's ticks would read as
		// missed: the backend's jobs are not drawn.
		h.backendErr(&out.errs, b, "paused jobs", err)
		return out, true
	}
	for _, rj := range jobstate.Jobs(insts) {
		if rj.Spec.Locked && (q.filter == "" || strings.Contains(rj.Spec.Name, q.filter)) {
			tj := timelineJob{b: b, led: led, rj: rj, pauses: cs.PausesOf(rj.Spec.Name)}
			switch {
			case cs.IsPaused(rj.Spec.Name):
				tj.paused = "cluster"
			case rj.PausedEverywhere():
				tj.paused = "replicas"
			}
			out.items = append(out.items, tj)
		}
	}
	return out, true
}

// hasProblem reports whether a job's counts in a range hold a missed tick
// or a run that failed, panicked, lost its lock or never ended: what the
// page counts as bad. Paused ticks, shut-down runs and catch-up runs are
// not problems.
func hasProblem(counts map[string]int) bool {
	for _, c := range []string{"missed", batontype.OutcomeFailed.String(), batontype.OutcomePanicked.String(),
		batontype.OutcomeLockLost.String(), unfinished} {
		if counts[c] > 0 {
			return true
		}
	}
	return false
}

// laneJobs lays out jobs in order, reporting to errs each job whose runs
// could not be read and leaving it out. The jobs' reads are independent
// round trips: a few at a time.
func (h *handler) laneJobs(ctx context.Context, jobs []timelineJob, q timelineQuery, now time.Time, errs *[]backendError) []laneJobJSON {
	lanes := make([]laneJobJSON, len(jobs))
	failed := make([]error, len(jobs))
	sem := make(chan struct{}, readers)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			lanes[i], failed[i] = h.laneJob(ctx, j, q, now)
		})
	}
	wg.Wait()
	out := make([]laneJobJSON, 0, len(jobs))
	for i, j := range jobs {
		if failed[i] != nil {
			h.backendErr(errs, j.b, "runs of "+j.rj.Spec.Name, failed[i])
			continue
		}
		out = append(out, lanes[i])
	}
	return out
}

// readers bounds the concurrent ledger reads of one timeline request.
const readers = 4

// laneJob reads the runs of one job that overlap [q.from, q.to] and lays
// them out.
func (h *handler) laneJob(ctx context.Context, j timelineJob, q timelineQuery, now time.Time) (laneJobJSON, error) {
	s := j.rj.Spec
	// A run that started up to AtMostFor before the range may still
	// overlap it. One that started up to Grace after the range claims a
	// tick in it: without it, a tick at the range's end would read as
	// missed though its run started a few milliseconds later. layout
	// draws only the runs that started in the range.
	runs, err := j.led.Runs(ctx, batontype.RunQuery{Job: s.Name, Since: q.from.Add(-s.AtMostFor), Until: q.to.Add(h.cfg.Grace), Limit: batontype.MaxRuns})
	if err != nil {
		return laneJobJSON{}, err
	}
	// The job's lease, read after its runs, tells an open run that is
	// still going from one whose process died (jobstate.Unfinished).
	var lease *batontype.LeaseInfo
	if in, ok := j.b.Provider.(lockprovider.Inspector); ok && slices.ContainsFunc(runs, func(r batontype.RunRecord) bool { return r.Outcome == batontype.OutcomeRunning }) {
		info, err := in.Inspect(ctx, s.Name)
		if err != nil {
			return laneJobJSON{}, err
		}
		lease = &info
	}
	// evidence is the earliest time the job is known to have existed: a
	// tick before it is not counted as missed.
	evidence := j.rj.KnownFrom(runs)
	// Ticks in [from, evidence) count as missed only if the job ran
	// before the range: ask the ledger, unless no tick falls there.
	if evidence.After(q.from) && firstTick(s, q.from).Before(evidence) {
		older, err := j.led.Runs(ctx, batontype.RunQuery{Job: s.Name, Until: q.from, Limit: 1})
		if err != nil {
			return laneJobJSON{}, err
		}
		if len(older) > 0 {
			evidence = q.from
		}
	}
	lj := layout(s, j.b.Name, j.rj.Replicas, runs, evidence, q, now, h.cfg.Grace, lease, j.paused != "", j.pauses)
	lj.Paused = j.paused
	return lj, nil
}

// firstTick returns the job's first tick at or after t, or the zero time.
func firstTick(s batontype.JobSpec, t time.Time) time.Time {
	sched, err := jobstate.ParseSchedule(s.Schedule, s.TimeZone)
	if err != nil {
		return time.Time{}
	}
	return sched.Next(t.Add(-time.Nanosecond))
}

// layout places runs in lanes and buckets. It only computes; lease is the
// job's lease read after runs, nil when there is none to read; paused
// tells a job paused now, pauses are its known cluster-wide pause spans.
func layout(s batontype.JobSpec, backend string, replicas []string, runs []batontype.RunRecord,
	evidence time.Time, q timelineQuery, now time.Time, grace time.Duration, lease *batontype.LeaseInfo,
	paused bool, pauses []batontype.PauseSpan) laneJobJSON {
	lj := laneJobJSON{Backend: backend, Job: s.Name, Schedule: s.Schedule, Counts: map[string]int{}}
	span := q.to.Sub(q.from)
	bucket := func(t time.Time) int {
		if t.Before(q.from) {
			return 0
		}
		b := int(int64(t.Sub(q.from)) * int64(q.buckets) / int64(span))
		return min(b, q.buckets-1)
	}

	// Ticks claimed by a run, before runs is filtered in place, and the
	// latest of them: a paused job's unclaimed ticks after it are paused,
	// like the unclaimed ticks within a known pause span.
	claimed := make(map[int64]bool, len(runs))
	var lastClaimed int64
	for _, r := range runs {
		if !r.Tick.IsZero() {
			claimed[r.Tick.UnixMilli()] = true
			lastClaimed = max(lastClaimed, r.Tick.UnixMilli())
		}
	}

	// Lanes: the registered replicas and every replica that ran a run
	// shown, sorted.
	lanes := slices.Clone(replicas)
	kept := runs[:0] // runs is this call's own slice
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
	lane := func(r batontype.RunRecord) int { i, _ := slices.BinarySearch(lanes, r.LockedBy); return i }
	class := func(r batontype.RunRecord) string {
		if jobstate.Unfinished(r, s, lease, now) {
			return unfinished
		}
		return r.Outcome.String()
	}

	// Ticks, and which of them no run claimed.
	ticks := make([]int64, 0, len(claimed)+64)
	var missed, pausedTicks []int64
	if sched, err := jobstate.ParseSchedule(s.Schedule, s.TimeZone); err == nil {
		due := now.Add(-grace)
		for t, n := sched.Next(q.from.Add(-time.Nanosecond)), 0; !t.IsZero() && !t.After(q.to) && n < maxTicks; t, n = sched.Next(t), n+1 {
			ms := t.UnixMilli()
			ticks = append(ticks, ms)
			switch {
			case claimed[ms]:
			case ((paused && ms > lastClaimed) || batontype.InPause(pauses, t)) && !t.After(now) && !t.Before(evidence):
				pausedTicks = append(pausedTicks, ms)
			case !t.After(due) && !t.Before(evidence):
				missed = append(missed, ms)
			}
		}
	}
	lj.Counts["missed"] = len(missed)
	if len(pausedTicks) > 0 {
		lj.Counts["paused"] = len(pausedTicks)
	}
	if len(ticks) <= q.buckets {
		lj.Ticks = ticks
	}
	// tickSegments sums ticks per bucket, for more ticks than buckets.
	tickSegments := func(ticks []int64, name string) []segmentJSON {
		counts := make([]bucketCounts, q.buckets)
		worst := make([]int8, q.buckets)
		for i := range worst {
			worst[i] = -1
		}
		for _, ms := range ticks {
			b := bucket(time.UnixMilli(ms))
			counts[b][cMissed]++
			worst[b] = cMissed
		}
		return segments(-1, worst, counts, []string{name})
	}
	if len(missed) <= q.buckets {
		lj.Missed = missed
	} else {
		lj.MissedSg = tickSegments(missed, "missed")
	}
	if len(pausedTicks) <= q.buckets {
		lj.PausedT = pausedTicks
	} else {
		lj.PausedSg = tickSegments(pausedTicks, "paused")
	}

	type placed struct {
		lane, class, b0, b1 int
	}
	pl := make([]placed, len(kept))
	total := bucketCounts{}
	for i, r := range kept {
		c := class(r)
		end := r.Finished
		if end.IsZero() {
			end = now
			if le := leaseEnd(r, s, now, c); !le.IsZero() {
				end = le
			}
		}
		pl[i] = placed{lane: lane(r), class: classOf(c), b0: bucket(r.Started), b1: bucket(end)}
		total[pl[i].class]++
		if r.CatchUp {
			total[cCatchUp]++
		}
		if r.Manual {
			total[cManual]++
		}
	}
	for i, n := range total {
		if n > 0 {
			lj.Counts[classes[i]] = int(n)
		}
	}
	if len(kept) <= q.buckets {
		lj.Mode = "runs"
		lj.Runs = make([]runJSON, 0, len(kept))
		for i := len(kept) - 1; i >= 0; i-- { // oldest first
			r := kept[i]
			rj := runJSON{Lane: pl[i].lane, Start: r.Started.UnixMilli(), Outcome: classes[pl[i].class], Token: r.Token,
				Error: r.Error, CatchUp: r.CatchUp, Manual: r.Manual}
			if !r.Tick.IsZero() {
				rj.Tick = r.Tick.UnixMilli()
			}
			if !r.Finished.IsZero() {
				rj.End = r.Finished.UnixMilli()
			}
			if le := leaseEnd(r, s, now, classes[pl[i].class]); !le.IsZero() {
				rj.LeaseEnd = le.UnixMilli()
			}
			lj.Runs = append(lj.Runs, rj)
		}
		return lj
	}

	lj.Mode = "buckets"
	counts := make([]bucketCounts, len(lanes)*q.buckets)
	worst := make([]int8, len(lanes)*q.buckets)
	for i := range worst {
		worst[i] = -1
	}
	for i, r := range kept {
		p := pl[i]
		row := p.lane * q.buckets
		bc := &counts[row+p.b0]
		bc[p.class]++
		if r.CatchUp {
			bc[cCatchUp]++
		}
		if r.Manual {
			bc[cManual]++
		}
		for b := p.b0; b <= p.b1; b++ { // the run covers these buckets
			if int(worst[row+b]) < p.class {
				worst[row+b] = int8(p.class)
			}
		}
	}
	for l := range lanes {
		row := l * q.buckets
		lj.Segments = append(lj.Segments, segments(l, worst[row:row+q.buckets], counts[row:row+q.buckets], classes[:])...)
	}
	return lj
}

// segments merges neighbouring buckets of the same worst class (-1:
// empty), naming classes by names.
func segments(lane int, worst []int8, counts []bucketCounts, names []string) []segmentJSON {
	var out []segmentJSON
	for b := 0; b < len(worst); b++ {
		if worst[b] < 0 {
			continue
		}
		w := worst[b]
		var sum bucketCounts
		b0 := b
		for ; b < len(worst) && worst[b] == w; b++ {
			for k, n := range counts[b] {
				sum[k] += n
			}
		}
		b--
		sg := segmentJSON{Lane: lane, B0: b0, B1: b, Worst: names[w], Counts: make(map[string]int, 2)}
		for k, n := range sum {
			if n > 0 {
				sg.Counts[names[k]] = int(n)
			}
		}
		out = append(out, sg)
	}
	return out
}

// leaseEnd is when the lease of r, an unfinished run (class c), ran out at
// the latest: its grant plus the job's AtMostFor, or now if that is later
// (it was read as ended). Zero for another run, or a job that renews its
// lease, whose last renewal is not recorded.
func leaseEnd(r batontype.RunRecord, s batontype.JobSpec, now time.Time, c string) time.Time {
	if c != unfinished || s.AtMostFor <= 0 || slices.Contains(s.Options, "auto_renew") {
		return time.Time{}
	}
	return minTime(r.Started.Add(s.AtMostFor), now)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
