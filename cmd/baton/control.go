package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// The control commands: jobs run, jobs pause, jobs resume. They act
// through lockprovider.Control, so every scheduler instance on the
// backend sees them.

type requestJSON struct {
	Backend string `json:"backend"`
	batontype.RunRequest
	Claimed bool `json:"claimed"`
	// Run is the manual run the claim started, with its outcome once it
	// ended (--wait).
	Run *batontype.RunRecord `json:"run,omitempty"`
}

type pausedJSON struct {
	Backend string `json:"backend"`
	Job     string `json:"job"`
	Paused  bool   `json:"paused"`
}

func jobControlCommands() []command {
	var (
		ttl  time.Duration
		wait bool
	)
	return []command{
		{
			group: "jobs", name: "run", args: "JOB",
			help: "run a job now, once, on one live replica that has it (exit 3 if none has it)",
			flags: func(fs *flag.FlagSet) {
				fs.DurationVar(&ttl, "ttl", batontype.DefaultRunRequestTTL, "drop the request if no replica claims it by then")
				fs.BoolVar(&wait, "wait", false, "wait (up to --timeout) until a replica claimed the request and the run ended; exit 0 if it succeeded, 1 if none claimed it, it did not succeed, or it was still running")
			},
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				return c.jobRun(ctx, fs.Arg(0), ttl, wait)
			},
		},
		{
			group: "jobs", name: "pause", args: "JOB",
			help: "pause a job on every replica (its ticks are skipped) until jobs resume, on the backends that know it",
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				return c.jobPause(ctx, fs.Arg(0), true)
			},
		},
		{
			group: "jobs", name: "resume", args: "JOB",
			help: "resume a job paused with jobs pause",
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				return c.jobPause(ctx, fs.Arg(0), false)
			},
		},
	}
}

// backendNamed returns the connected backend called name (a request's
// backend, which came from c.backends).
func (c *cli) backendNamed(name string) backend {
	for _, b := range c.backends {
		if b.name == name {
			return b
		}
	}
	return backend{}
}

// controls returns the backends that implement lockprovider.Control.
func (c *cli) controls() []backend {
	var out []backend
	for _, b := range c.backends {
		if _, ok := b.p.(lockprovider.Control); ok {
			out = append(out, b)
		}
	}
	return out
}

// jobRun requests a run of job on every backend where a live scheduler
// instance registered it.
func (c *cli) jobRun(ctx context.Context, job string, ttl time.Duration, wait bool) int {
	if err := batontype.ValidateName(job); err != nil {
		fmt.Fprintln(c.stderr, err) // the error starts with "baton: " already
		return exitUsage
	}
	var out []requestJSON
	for _, b := range c.controls() {
		reg, ok := b.p.(lockprovider.Registry)
		if !ok {
			continue
		}
		insts, err := reg.Instances(ctx)
		if err != nil {
			c.fail(b, "registry", err)
			continue
		}
		if !slices.ContainsFunc(jobstate.Jobs(insts), func(rj jobstate.RegisteredJob) bool { return rj.Spec.Name == job }) {
			continue
		}
		r, err := b.p.(lockprovider.Control).RequestRun(ctx, batontype.RunRequest{Job: job, RequestedBy: cliOperator(), TTL: ttl})
		if err != nil {
			c.fail(b, "request run", err)
			continue
		}
		out = append(out, requestJSON{Backend: b.name, RunRequest: r})
	}
	if len(out) == 0 && c.failed != 0 {
		return c.failed
	}
	if len(out) == 0 {
		fmt.Fprintf(c.stderr, "baton: no live scheduler instance has job %q (%s)\n", job, c.looked())
		return exitNotFound
	}
	code := exitOK
	if wait {
		for i := range out {
			claimed, err := c.waitClaimed(ctx, out[i])
			if err != nil && ctx.Err() == nil {
				return c.fail(backend{name: out[i].Backend}, "control state", err)
			}
			out[i].Claimed = claimed
			if !claimed {
				code = exitProblem
				continue
			}
			run, err := c.waitRun(ctx, out[i])
			if err != nil && ctx.Err() == nil {
				return c.fail(backend{name: out[i].Backend}, "ledger", err)
			}
			out[i].Run = run
			if run == nil || run.Outcome != batontype.OutcomeSucceeded {
				code = exitProblem
			}
		}
	}
	rows := make([][]string, 0, len(out))
	for _, r := range out {
		state := "pending"
		switch {
		case r.Run != nil:
			state = r.Run.Outcome.String() + " on " + r.Run.LockedBy
			if r.Run.Error != "" {
				state += ": " + r.Run.Error
			}
		case r.Claimed:
			state = "claimed"
		}
		rows = append(rows, []string{r.Job, r.Backend, r.ID, stamp(r.Requested), stamp(r.Until), state})
	}
	c.emit(out, []string{"JOB", "BACKEND", "REQUEST", "REQUESTED", "UNTIL", "STATE"}, rows)
	for _, r := range out {
		if wait && r.Claimed && (r.Run == nil || r.Run.Outcome == batontype.OutcomeRunning) {
			fmt.Fprintf(c.stderr, "baton: %s: the run of %s had not ended by --timeout (%v); baton jobs runs %s shows it\n", r.Backend, r.Job, c.opts.timeout, r.Job)
		}
	}
	return c.exit(code)
}

// waitRun polls the ledger for the manual run a claimed request started,
// until it has ended or ctx ends, and returns the latest record seen
// (nil if none). The run is the oldest manual run of the job that started
// no earlier than the request (both on the backend's clock); a backend
// without a ledger has none to report.
func (c *cli) waitRun(ctx context.Context, r requestJSON) (*batontype.RunRecord, error) {
	led, _ := c.backendNamed(r.Backend).p.(lockprovider.Ledger)
	if led == nil {
		return nil, nil
	}
	var seen *batontype.RunRecord
	for {
		runs, err := led.Runs(ctx, batontype.RunQuery{Job: r.Job, Since: r.Requested})
		if err != nil {
			return seen, err
		}
		for i := len(runs) - 1; i >= 0; i-- { // newest first: the oldest match is last
			if runs[i].Manual && !runs[i].Started.Before(r.Requested) {
				seen = &runs[i]
				break
			}
		}
		if seen != nil && seen.Outcome != batontype.OutcomeRunning {
			return seen, nil
		}
		select {
		case <-ctx.Done():
			return seen, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitClaimed polls until r is no longer pending (a replica claimed it)
// or ctx ends.
func (c *cli) waitClaimed(ctx context.Context, r requestJSON) (bool, error) {
	ctl := c.backendNamed(r.Backend).p.(lockprovider.Control)
	for {
		st, err := ctl.ControlState(ctx)
		if err != nil {
			return false, err
		}
		if !slices.ContainsFunc(st.Requests, func(p batontype.RunRequest) bool { return p.ID == r.ID }) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// jobPause sets job's paused flag on the backends that know the job (a
// live instance registers it, or the ledger has a run of it), or clears
// it on the backends where it is set. A pause of a job that no backend
// knows sets the flag everywhere, with a warning: a job may be paused
// before it is deployed.
func (c *cli) jobPause(ctx context.Context, job string, paused bool) int {
	if err := batontype.ValidateName(job); err != nil {
		fmt.Fprintln(c.stderr, err)
		return exitUsage
	}
	bs := c.controls()
	if len(bs) == 0 {
		fmt.Fprintln(c.stderr, "baton: no backend supports job control")
		return exitUsage
	}
	var targets []backend
	for _, b := range bs {
		var (
			has bool
			err error
		)
		if paused {
			has, err = jobKnownOn(ctx, b, job)
		} else {
			var names []string
			names, err = pausedJobs(ctx, b)
			has = slices.Contains(names, job)
		}
		if err != nil {
			c.fail(b, "read job state", err) // not acted on: it may or may not have the job
			continue
		}
		if has {
			targets = append(targets, b)
		}
	}
	switch {
	case len(targets) > 0:
	case c.failed != 0:
		return c.failed
	case paused:
		// A typo would pause nothing: say so, and pause everywhere.
		fmt.Fprintf(c.stderr, "baton: warning: no live scheduler instance registers job %q and no ledger has a run of it; paused anyway on every backend (a replica that registers it later honours the flag)\n", job)
		targets = bs
	default:
		// A misspelt name would leave the real job paused.
		fmt.Fprintf(c.stderr, "baton: warning: job %q is not paused on any backend; nothing to resume\n", job)
	}
	out := []pausedJSON{}
	for _, b := range targets {
		if err := b.p.(lockprovider.Control).SetPaused(ctx, job, paused); err != nil {
			c.fail(b, "set paused", err)
			continue
		}
		out = append(out, pausedJSON{Backend: b.name, Job: job, Paused: paused})
	}
	rows := make([][]string, 0, len(out))
	for _, p := range out {
		rows = append(rows, []string{p.Job, p.Backend, yesNo(p.Paused)})
	}
	c.emit(out, []string{"JOB", "BACKEND", "PAUSED"}, rows)
	return c.exit(exitOK)
}

// pausedJobs returns the jobs paused cluster-wide on b (none if b has no
// control capability).
func pausedJobs(ctx context.Context, b backend) ([]string, error) {
	ctl, ok := b.p.(lockprovider.Control)
	if !ok {
		return nil, nil
	}
	st, err := ctl.ControlState(ctx)
	return st.Paused, err
}
