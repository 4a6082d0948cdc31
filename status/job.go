package status

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// The job page: one job of one backend, with its run history.

// Bounds of the job page's run history.
const (
	DefaultJobRuns = 50
	MaxJobRuns     = 500
	// historyTicks is how far back the job page looks for missed ticks.
	historyTicks = 24 * time.Hour
)

type jobPageJSON struct {
	Now    time.Time             `json:"now"`
	Job    jobJSON               `json:"job"`
	Source string                `json:"source,omitempty"`
	Runs   []batontype.RunRecord `json:"runs"`
	// Lease is the job's lease now (lockprovider.Inspector); nil when the
	// backend does not say.
	Lease *batontype.LeaseInfo `json:"lease,omitempty"`
	// Unfinished lists the tokens of the Runs that never ended although
	// their lease did (jobstate.Unfinished): their process died.
	Unfinished []int64 `json:"unfinished"`
	// Problems are the ticks of the last 24 hours that jobstate.Check
	// finds missed, failed or unfinished (a paused job has none).
	Problems []jobstate.Problem `json:"problems"`
	// Requests are the job's pending run-now requests.
	Requests []batontype.RunRequest `json:"requests"`
	Errors   []backendError         `json:"errors"`
}

// findJob returns the registered job name of backend, or a 404 when the
// backend or the job is unknown there: the page and the CLI (exit 3)
// answer alike for a job that does not exist.
func (h *handler) findJob(ctx context.Context, backend, name string) (Backend, error) {
	b, ok := h.backend(backend)
	if !ok {
		return b, &httpError{http.StatusNotFound, "no backend named " + strconv.Quote(backend)}
	}
	reg, ok := b.Provider.(lockprovider.Registry)
	if !ok {
		return b, &httpError{http.StatusNotFound, "backend " + b.Name + " keeps no job registry"}
	}
	insts, err := reg.Instances(ctx)
	if err != nil {
		return b, err
	}
	if d, ok := b.Provider.(lockprovider.Departures); ok {
		departed, err := d.Departed(ctx)
		if err != nil {
			return b, err
		}
		for _, di := range departed {
			if !di.Left { // its jobs are still listed (jobstate.ListAll)
				insts = append(insts, di.Instance)
			}
		}
	}
	for _, in := range insts {
		for _, j := range in.Jobs {
			if j.Name == name {
				return b, nil
			}
		}
	}
	return b, &httpError{http.StatusNotFound, "no live or gone scheduler instance on " + b.Name + " has a job named " + strconv.Quote(name)}
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	backend, name := q.Get("backend"), q.Get("name")
	limit := DefaultJobRuns
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxJobRuns {
			h.fail(w, http.StatusBadRequest, "limit must be between 1 and "+strconv.Itoa(MaxJobRuns))
			return
		}
		limit = n
	}
	ctx, cancel := h.callCtx(r)
	defer cancel()
	if backend == "" {
		// A link without its backend (#job/NAME): the first backend
		// that has the job.
		for _, c := range h.cfg.Backends {
			if _, err := h.findJob(ctx, c.Name, name); err == nil {
				backend = c.Name
				break
			}
		}
	}
	b, err := h.findJob(ctx, backend, name)
	if he, ok := err.(*httpError); ok {
		h.fail(w, he.code, he.msg)
		return
	}
	if err != nil {
		h.log.Warn("status: backend error", "backend", b.Name, "what", "registry", "err", err)
		h.fail(w, http.StatusServiceUnavailable, "registry of "+b.Name+" could not be read: "+err.Error())
		return
	}
	h.cachedView(w, r, "job?"+r.URL.RawQuery, func(ctx context.Context) any {
		return h.buildJob(ctx, b, name, limit, time.Now())
	})
}

func (h *handler) buildJob(ctx context.Context, b Backend, name string, limit int, now time.Time) jobPageJSON {
	one := h.cfg
	one.Backends = []Backend{b}
	jh := &handler{cfg: one, log: h.log}
	js := jh.buildJobs(ctx, now, name, "")
	out := jobPageJSON{Now: now, Source: b.Source, Runs: []batontype.RunRecord{}, Unfinished: []int64{}, Problems: []jobstate.Problem{},
		Requests: []batontype.RunRequest{}, Errors: js.Errors}
	for _, j := range js.Jobs {
		if j.Name == name {
			out.Job = j
		}
	}
	if led, ok := b.Provider.(lockprovider.Ledger); ok && out.Job.Locked {
		runs, err := led.Runs(ctx, batontype.RunQuery{Job: name, Limit: limit})
		if err != nil {
			h.backendErr(&out.Errors, b, "runs of "+name, err)
			out.Job.State = jobstate.StateUnknown
		} else {
			out.Runs = runs
		}
	}
	if !out.Job.Locked {
		// What the registry has: each replica's latest run.
		out.Runs = append(out.Runs, out.Job.ReplicaRuns...)
		slices.SortFunc(out.Runs, func(a, b batontype.RunRecord) int { return b.Started.Compare(a.Started) })
	}
	if in, ok := b.Provider.(lockprovider.Inspector); ok && out.Job.Locked {
		info, err := in.Inspect(ctx, name)
		if err != nil {
			h.backendErr(&out.Errors, b, "lease of "+name, err)
		} else {
			out.Lease = &info
		}
	}
	if out.Job.Locked && (out.Lease != nil || !isInspector(b)) {
		spec := batontype.JobSpec{AtMostFor: time.Duration(out.Job.AtMostForMS) * time.Millisecond, Options: out.Job.Options}
		for _, r := range out.Runs {
			if jobstate.Unfinished(r, spec, out.Lease, now) {
				out.Unfinished = append(out.Unfinished, r.Token)
			}
		}
	}
	if out.Job.Locked && out.Job.State != jobstate.StatePaused {
		rep, err := jobstate.Check(ctx, b.Provider, jobstate.CheckOptions{Grace: h.cfg.Grace, Now: now, Since: now.Add(-historyTicks), Jobs: []string{name}})
		if err != nil {
			h.backendErr(&out.Errors, b, "check of "+name, err)
		} else {
			out.Problems = append(out.Problems, rep.Problems...)
			slices.Reverse(out.Problems) // newest first, as the runs
		}
	}
	if ctl, ok := b.Provider.(lockprovider.Control); ok {
		if st, err := ctl.ControlState(ctx); err == nil {
			for _, rq := range st.Requests {
				if rq.Job == name {
					out.Requests = append(out.Requests, rq)
				}
			}
		}
	}
	return out
}

// isInspector reports whether b's provider reads leases.
func isInspector(b Backend) bool {
	_, ok := b.Provider.(lockprovider.Inspector)
	return ok
}
