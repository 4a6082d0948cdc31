package status

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// The Jobs view.

type jobsJSON struct {
	Now       time.Time      `json:"now"`
	Jobs      []jobJSON      `json:"jobs"`
	Instances []instJSON     `json:"instances"`
	Errors    []backendError `json:"errors"`
	// Sources are the backends read, each with what it reads, so an
	// empty view says where it looked.
	Sources []sourceJSON `json:"sources"`
}

// sourceJSON is a backend a view read, or failed to read.
type sourceJSON struct {
	Backend string `json:"backend"`
	Source  string `json:"source,omitempty"` // Backend.Source
	// Unknown is set when the backend could not be read for this view:
	// what it holds is unknown, not empty.
	Unknown bool `json:"unknown,omitempty"`
	// Stale is set when the backend could not be read and the view shows
	// what it held when last read, at AsOf.
	Stale bool      `json:"stale,omitempty"`
	AsOf  time.Time `json:"as_of,omitzero"`
}

type jobJSON struct {
	Backend      string               `json:"backend"`
	Name         string               `json:"name"`
	Schedule     string               `json:"schedule"`
	TimeZone     string               `json:"time_zone,omitempty"`
	Locked       bool                 `json:"locked"`
	AtMostForMS  int64                `json:"at_most_for_ms,omitempty"`
	AtLeastForMS int64                `json:"at_least_for_ms,omitempty"`
	Options      []string             `json:"options,omitempty"`
	NextTick     time.Time            `json:"next_tick,omitzero"`
	LastRun      *batontype.RunRecord `json:"last_run,omitempty"`
	LastSuccess  *batontype.RunRecord `json:"last_success,omitempty"`
	Replicas     []string             `json:"replicas"`
	// Gone names, for a job no live replica runs, the replicas that died
	// with it registered (jobstate.ListAll).
	Gone []string `json:"gone,omitempty"`
	// ReplicaRuns are an unlocked job's latest run on each replica, from
	// the registry (jobstate.RegisteredJob.LastRuns).
	ReplicaRuns []batontype.RunRecord `json:"replica_runs,omitempty"`
	// Instances is the number of live scheduler instances of the backend,
	// so the page can show "2/3" replicas.
	Instances int `json:"instances"`
	// State is one of unknown, missed, failed, unfinished, paused,
	// running, ok and unlocked: jobstate.State, as the CLI gives it.
	State string `json:"state"`
	// LastRunUnfinished: the last run never ended although its lease did
	// (jobstate.Unfinished): its process died.
	LastRunUnfinished bool `json:"last_run_unfinished,omitempty"`
	// Paused is "cluster" (paused through the backend), "replicas" (every
	// live replica paused it on its instance) or, with PausedOn naming
	// them, "some" (some replicas did: the others still run it).
	Paused   string   `json:"paused,omitempty"`
	PausedOn []string `json:"paused_on,omitempty"`
	// Problem is the latest due tick's problem found by jobstate.Check:
	// "missed", "failed" or "unfinished"; empty when it ran and succeeded,
	// or when a later run succeeded.
	Problem     string    `json:"problem,omitempty"`
	ProblemTick time.Time `json:"problem_tick,omitzero"`
	// Holder is the lease that kept a missed tick from being claimed, and
	// Blocker the run that held it at the tick (jobstate.Problem).
	Holder  *jobstate.Holder     `json:"holder,omitempty"`
	Blocker *batontype.RunRecord `json:"blocker,omitempty"`
	Control bool                 `json:"control,omitempty"`
	// Skips are the ticks each replica did not run, by reason, as its
	// instance last published them (jobstate.RegisteredJob.Skips); on
	// the job page only.
	Skips []jobstate.ReplicaSkips `json:"skips,omitempty"`
}

type instJSON struct {
	Backend  string `json:"backend"`
	LockedBy string `json:"locked_by"`
	// State is alive, late, gone or left (jobstate.Replicas); a gone or
	// left one departed at Until and was last seen at Heartbeat.
	State     string    `json:"state"`
	Version   string    `json:"version,omitempty"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	Until     time.Time `json:"until"`
	Jobs      int       `json:"jobs"`
}

func (h *handler) jobs(w http.ResponseWriter, r *http.Request) {
	h.cachedView(w, r, "jobs", func(ctx context.Context) any { return h.buildJobs(ctx, time.Now(), "", "jobs") })
}

// source describes backend b for a view; unknown when it could not be read.
func source(b Backend, unknown bool) sourceJSON {
	return sourceJSON{Backend: b.Name, Source: b.Source, Unknown: unknown}
}

// pausedJobs returns the jobs paused cluster-wide on b and its pending
// run requests; nil without a lockprovider.Control.
func pausedJobs(ctx context.Context, b Backend) (batontype.ControlState, error) {
	ctl, ok := b.Provider.(lockprovider.Control)
	if !ok {
		return batontype.ControlState{}, nil
	}
	return ctl.ControlState(ctx)
}

// buildJobs reads every backend's jobs; only, when not empty, is the one
// job wanted (the job page), which spares the other jobs' ledger reads.
// view names the view for the stale fallback (see readParts); empty
// means none.
func (h *handler) buildJobs(ctx context.Context, now time.Time, only, view string) jobsJSON {
	out := jobsJSON{Now: now, Jobs: []jobJSON{}, Instances: []instJSON{}, Errors: []backendError{}, Sources: []sourceJSON{}}
	for _, p := range readParts(ctx, h, view, func(ctx context.Context, b Backend) (part[jobsPart], bool) {
		return h.jobsOf(ctx, b, now, only)
	}) {
		out.Jobs = append(out.Jobs, p.items.jobs...)
		out.Instances = append(out.Instances, p.items.insts...)
		out.Errors = append(out.Errors, p.errs...)
		out.Sources = append(out.Sources, p.src)
	}
	return out
}

// jobsPart is one backend's part of the Jobs view.
type jobsPart struct {
	jobs  []jobJSON
	insts []instJSON
}

// jobsOf reads b's part of the Jobs view; false for a backend without a
// registry.
func (h *handler) jobsOf(ctx context.Context, b Backend, now time.Time, only string) (part[jobsPart], bool) {
	var out part[jobsPart]
	reg, ok := b.Provider.(lockprovider.Registry)
	if !ok {
		return out, false
	}
	insts, err := reg.Instances(ctx)
	if err != nil {
		h.backendErr(&out.errs, b, "registry", err)
		out.src = source(b, true)
		return out, true
	}
	unknown := false
	var departed []batontype.Departed
	if d, ok := b.Provider.(lockprovider.Departures); ok {
		if departed, err = d.Departed(ctx); err != nil {
			h.backendErr(&out.errs, b, "departed instances", err)
			unknown = true
		}
	}
	gone := 0
	for _, r := range jobstate.Replicas(insts, departed, now) {
		out.items.insts = append(out.items.insts, instJSON{Backend: b.Name, LockedBy: r.LockedBy, State: r.State, Version: r.Version,
			Started: r.Started, Heartbeat: r.Heartbeat, Until: r.Until, Jobs: len(r.Jobs)})
		if r.State == jobstate.ReplicaGone {
			gone++
		}
	}
	cs, csErr := pausedJobs(ctx, b)
	if err := csErr; err != nil {
		h.backendErr(&out.errs, b, "paused jobs", err)
		unknown = true
	}
	led, _ := b.Provider.(lockprovider.Ledger)
	problems := map[string]*jobstate.Problem{}
	checked := false
	if led != nil && len(insts) > 0 {
		opts := jobstate.CheckOptions{Grace: h.cfg.Grace, Now: now}
		if only != "" {
			opts.Jobs = []string{only}
		}
		rep, err := jobstate.Check(ctx, b.Provider, opts)
		if err != nil && !errors.Is(err, jobstate.ErrNoInstances) {
			h.backendErr(&out.errs, b, "check", err)
			unknown = true
		} else {
			checked = true
		}
		for _, p := range rep.Problems {
			problems[p.Job] = &p // oldest first: keep the latest
		}
	}
	nInst := len(insts) + gone // a replica that died counts: 2/3, not 2/2
	if only != "" {
		insts = onlyJob(insts, only)
	}
	for _, js := range jobstate.ListAll(ctx, insts, departed, led, now) {
		if only != "" && js.Spec.Name != only {
			continue
		}
		s := js.Spec
		j := jobJSON{Backend: b.Name, Name: s.Name, Schedule: s.Schedule, TimeZone: s.TimeZone, Locked: s.Locked,
			AtMostForMS: s.AtMostFor.Milliseconds(), AtLeastForMS: s.AtLeastFor.Milliseconds(), Options: s.Options,
			Replicas: js.Replicas, Gone: js.Gone, Instances: nInst, Control: b.Control != nil && h.cfg.Actions,
			NextTick: js.NextTick, LastRun: js.LastRun, LastSuccess: js.LastSuccess}
		switch {
		case cs.IsPaused(s.Name):
			j.Paused = "cluster"
		case js.PausedEverywhere():
			j.Paused = "replicas"
		case len(js.PausedOn) > 0:
			j.Paused = "some"
		}
		j.PausedOn, j.ReplicaRuns = js.PausedOn, js.LastRuns
		if only != "" {
			j.Skips = js.Skips // the job page's: a fleet's Jobs view would carry one per job and replica
		}
		lease, err := openLease(ctx, b, js.LastRun)
		if err != nil {
			h.backendErr(&out.errs, b, "lease of "+s.Name, err)
			unknown = true
		}
		p := problems[s.Name]
		j.State = jobstate.State(js, cs.IsPaused(s.Name), p, lease, now)
		if p != nil && j.State == p.Kind {
			j.Problem, j.ProblemTick, j.Holder, j.Blocker = p.Kind, p.Tick, p.Holder, p.Blocker
		}
		j.LastRunUnfinished = js.LastRun != nil && jobstate.Unfinished(*js.LastRun, s, lease, now)
		if js.Err != nil {
			h.backendErr(&out.errs, b, "last runs of "+s.Name, js.Err)
			j.State = jobstate.StateUnknown
		} else if s.Locked && (csErr != nil || err != nil || led != nil && !checked && j.State != jobstate.StatePaused) {
			j.State = jobstate.StateUnknown // whether it is paused, or how its ticks went, could not be read
		}
		out.items.jobs = append(out.items.jobs, j)
	}
	out.src = source(b, unknown)
	return out, true
}

// openLease reads the job's lease when its last run has not ended, for
// jobstate.Unfinished; nil when it has, or b has no Inspector.
func openLease(ctx context.Context, b Backend, last *batontype.RunRecord) (*batontype.LeaseInfo, error) {
	in, ok := b.Provider.(lockprovider.Inspector)
	if !ok || last == nil || last.Outcome != batontype.OutcomeRunning {
		return nil, nil
	}
	info, err := in.Inspect(ctx, last.Job)
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// onlyJob keeps, of each instance, the job named name, and drops the
// instances without it.
func onlyJob(insts []batontype.Instance, name string) []batontype.Instance {
	var out []batontype.Instance
	for _, in := range insts {
		for _, j := range in.Jobs {
			if j.Name == name {
				in.Jobs = []batontype.JobSpec{j}
				out = append(out, in)
				break
			}
		}
	}
	return out
}

// The Locks view.

type locksJSON struct {
	Now     time.Time      `json:"now"`
	Locks   []lockJSON     `json:"locks"`
	Errors  []backendError `json:"errors"`
	Sources []sourceJSON   `json:"sources"`
}

type lockJSON struct {
	Backend   string    `json:"backend"`
	Name      string    `json:"name"`
	Held      bool      `json:"held"`
	LockedBy  string    `json:"locked_by"`
	Token     int64     `json:"token"`
	GrantedAt time.Time `json:"granted_at,omitzero"`
	Until     time.Time `json:"until,omitzero"`
	// AtLeastUntil is the end of the lease's minimum hold (AtLeastFor): a
	// release before then keeps the name held until then. The provider
	// reports it (LeaseInfo.AtLeastUntil); for a registered job's lock on
	// a provider that does not (the ShedLock-compatible ones), it is the
	// grant plus the job's AtLeastFor from the registry.
	AtLeastUntil time.Time `json:"at_least_until,omitzero"`
	LastTick     time.Time `json:"last_tick,omitzero"`
	Job          bool      `json:"job,omitempty"` // the name is a registered job's
}

func (h *handler) locks(w http.ResponseWriter, r *http.Request) {
	all := r.URL.Query().Get("all") == "1"
	key := "locks"
	if all {
		key = "locks-all"
	}
	h.cachedView(w, r, key, func(ctx context.Context) any { return h.buildLocks(ctx, all, key) })
}

func (h *handler) buildLocks(ctx context.Context, all bool, view string) locksJSON {
	out := locksJSON{Now: time.Now(), Locks: []lockJSON{}, Errors: []backendError{}, Sources: []sourceJSON{}}
	for _, p := range readParts(ctx, h, view, func(ctx context.Context, b Backend) (part[[]lockJSON], bool) {
		return h.locksOf(ctx, b, all)
	}) {
		out.Locks = append(out.Locks, p.items...)
		out.Errors = append(out.Errors, p.errs...)
		out.Sources = append(out.Sources, p.src)
	}
	slices.SortFunc(out.Locks, func(a, b lockJSON) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Backend, b.Backend))
	})
	return out
}

// locksOf reads b's part of the Locks view; false for a backend without
// an Inspector.
func (h *handler) locksOf(ctx context.Context, b Backend, all bool) (part[[]lockJSON], bool) {
	var out part[[]lockJSON]
	in, ok := b.Provider.(lockprovider.Inspector)
	if !ok {
		return out, false
	}
	specs := map[string]batontype.JobSpec{}
	if reg, ok := b.Provider.(lockprovider.Registry); ok {
		insts, err := reg.Instances(ctx)
		if err != nil {
			h.backendErr(&out.errs, b, "registry", err)
		}
		for _, rj := range jobstate.Jobs(insts) {
			specs[rj.Spec.Name] = rj.Spec
		}
	}
	infos, err := in.List(ctx)
	out.src = source(b, err != nil)
	if err != nil {
		h.backendErr(&out.errs, b, "list locks", err)
		return out, true
	}
	for _, i := range infos {
		if !i.Held && !all {
			continue
		}
		l := lockJSON{Backend: b.Name, Name: i.Name, Held: i.Held, LockedBy: i.LockedBy, Token: i.Token,
			GrantedAt: i.GrantedAt, Until: i.Until, AtLeastUntil: i.AtLeastUntil, LastTick: i.LastTick}
		if s, ok := specs[i.Name]; ok {
			l.Job = true
			if l.AtLeastUntil.IsZero() && s.AtLeastFor > 0 && !i.GrantedAt.IsZero() {
				l.AtLeastUntil = i.GrantedAt.Add(s.AtLeastFor)
			}
		}
		out.items = append(out.items, l)
	}
	return out, true
}

// The Rate limits view.

// LimitState classifies what remains of a limit: "over" when nothing
// remains, "near" when at most a tenth of its capacity does, else "ok".
// The Rate limits view and baton limits ls mark keys with it.
func LimitState(lim batontype.RateLimit, remaining int64) string {
	switch {
	case remaining <= 0:
		return "over"
	case remaining*10 <= lim.Capacity():
		return "near"
	}
	return "ok"
}

// maxPeeks bounds the keys whose remaining units one refresh asks for.
const maxPeeks = 500

type limitsJSON struct {
	Now     time.Time      `json:"now"`
	Limits  []limitJSON    `json:"limits"`
	Peeked  bool           `json:"peeked"` // Config.Limits is set
	Errors  []backendError `json:"errors"`
	Sources []sourceJSON   `json:"sources"`
}

type limitJSON struct {
	Backend   string    `json:"backend"`
	Key       string    `json:"key"`
	Algorithm string    `json:"algorithm"`
	PeriodMS  int64     `json:"period_ms"`
	ResetAt   time.Time `json:"reset_at,omitzero"` // full capacity again (backend clock)
	// With Config.Limits: the limit, what it would admit now, and when it
	// is full again.
	Rate      int64  `json:"rate,omitempty"`
	Capacity  int64  `json:"capacity,omitempty"`
	Remaining *int64 `json:"remaining,omitempty"`
	// State is "over" (nothing remains), "near" (at most a tenth of the
	// capacity remains) or "ok"; empty without Config.Limits.
	State string `json:"state,omitempty"`
}

func (h *handler) limits(w http.ResponseWriter, r *http.Request) {
	h.cachedView(w, r, "limits", h.buildLimits)
}

func (h *handler) buildLimits(ctx context.Context) any {
	out := limitsJSON{Now: time.Now(), Limits: []limitJSON{}, Peeked: h.cfg.Limits != nil, Errors: []backendError{}, Sources: []sourceJSON{}}
	for _, p := range readParts(ctx, h, "limits", h.limitsOf) {
		out.Limits = append(out.Limits, p.items...)
		out.Errors = append(out.Errors, p.errs...)
		out.Sources = append(out.Sources, p.src)
	}
	rank := map[string]int{jobstate.StateUnknown: 0, "over": 1, "near": 2}
	slices.SortStableFunc(out.Limits, func(a, b limitJSON) int {
		ra, ok := rank[a.State]
		if !ok {
			ra = 3
		}
		rb, ok := rank[b.State]
		if !ok {
			rb = 3
		}
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Backend, b.Backend))
	})
	return out
}

// limitsOf reads b's part of the Rate limits view; false for a backend
// without a RateLister.
func (h *handler) limitsOf(ctx context.Context, b Backend) (part[[]limitJSON], bool) {
	var out part[[]limitJSON]
	ls, ok := b.Provider.(lockprovider.RateLister)
	if !ok {
		return out, false
	}
	infos, err := ls.ListRates(ctx)
	out.src = source(b, err != nil)
	if err != nil {
		h.backendErr(&out.errs, b, "list rate limits", err)
		return out, true
	}
	for _, i := range infos {
		out.items = append(out.items, limitJSON{Backend: b.Name, Key: i.Key, Algorithm: i.Algorithm.String(),
			PeriodMS: i.Period.Milliseconds(), ResetAt: i.ResetAt})
	}
	rl, ok := b.Provider.(lockprovider.RateLimiter)
	if h.cfg.Limits == nil || !ok {
		return out, true
	}
	peeks := 0
	for i := 0; i < len(out.items) && peeks < maxPeeks; i++ {
		l := &out.items[i]
		if l.State != "" {
			continue // filled by an earlier entry of the same key
		}
		lims := h.cfg.Limits(l.Key)
		if len(lims) == 0 {
			continue
		}
		peeks++
		// N 0 asks what the limits would admit without charging.
		res, err := rl.RateLimit(ctx, lockprovider.RateRequest{Key: l.Key, N: 0, Limits: lims})
		for j := range out.items {
			e := &out.items[j]
			if e.Key != l.Key {
				continue
			}
			if err != nil {
				e.State = jobstate.StateUnknown // what remains could not be read
				continue
			}
			for k, lim := range lims {
				if lim.Algorithm.String() == e.Algorithm && lim.Period.Milliseconds() == e.PeriodMS && k < len(res.Limits) {
					rem := res.Limits[k].Remaining
					e.Rate, e.Capacity, e.Remaining = lim.Rate, lim.Capacity(), &rem
					e.State = LimitState(lim, rem)
				}
			}
		}
		if err != nil {
			h.backendErr(&out.errs, b, "rate limit of "+l.Key, err)
		}
	}
	return out, true
}
