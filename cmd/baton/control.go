package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
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
				fs.BoolVar(&wait, "wait", false, "wait (up to --timeout) until a replica claimed the request; exit 1 if none did")
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
			help: "pause a job on every replica (its ticks are skipped) until jobs resume",
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
			return c.fail(b, "registry", err)
		}
		if !slices.ContainsFunc(jobstate.Jobs(insts), func(rj jobstate.RegisteredJob) bool { return rj.Spec.Name == job }) {
			continue
		}
		r, err := b.p.(lockprovider.Control).RequestRun(ctx, batontype.RunRequest{Job: job, RequestedBy: "baton jobs run on " + lease.LockedBy(), TTL: ttl})
		if err != nil {
			return c.fail(b, "request run", err)
		}
		out = append(out, requestJSON{Backend: b.name, RunRequest: r})
	}
	if len(out) == 0 {
		fmt.Fprintf(c.stderr, "baton: no live scheduler instance has job %q\n", job)
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
			}
		}
	}
	rows := make([][]string, 0, len(out))
	for _, r := range out {
		state := "pending"
		if r.Claimed {
			state = "claimed"
		}
		rows = append(rows, []string{r.Job, r.Backend, r.ID, stamp(r.Requested), stamp(r.Until), state})
	}
	c.emit(out, []string{"JOB", "BACKEND", "REQUEST", "REQUESTED", "UNTIL", "STATE"}, rows)
	return code
}

// waitClaimed polls until r is no longer pending (a replica claimed it)
// or ctx ends.
func (c *cli) waitClaimed(ctx context.Context, r requestJSON) (bool, error) {
	var ctl lockprovider.Control
	for _, b := range c.backends {
		if b.name == r.Backend {
			ctl = b.p.(lockprovider.Control)
		}
	}
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

// jobPause sets or clears job's paused flag on every backend.
func (c *cli) jobPause(ctx context.Context, job string, paused bool) int {
	bs := c.controls()
	if len(bs) == 0 {
		fmt.Fprintln(c.stderr, "baton: no backend supports job control")
		return exitUsage
	}
	if paused {
		// Pausing a job before it is deployed is allowed; a typo would
		// pause nothing, so say when nothing knows the name.
		known, code := c.jobKnown(ctx, job)
		if code != exitOK {
			return code
		}
		if !known {
			fmt.Fprintf(c.stderr, "baton: warning: no live scheduler instance registers job %q and no ledger has a run of it; paused anyway (a replica that registers it later honours the flag)\n", job)
		}
	} else {
		// Resuming is idempotent, but a misspelt name would leave the
		// real job paused: say when no backend has the name paused.
		found := false
		for _, b := range bs {
			names, err := pausedJobs(ctx, b)
			if err != nil {
				return c.fail(b, "read control state", err)
			}
			found = found || slices.Contains(names, job)
		}
		if !found {
			fmt.Fprintf(c.stderr, "baton: warning: job %q is not paused on any backend; nothing to resume\n", job)
		}
	}
	var out []pausedJSON
	for _, b := range bs {
		if err := b.p.(lockprovider.Control).SetPaused(ctx, job, paused); err != nil {
			return c.fail(b, "set paused", err)
		}
		out = append(out, pausedJSON{Backend: b.name, Job: job, Paused: paused})
	}
	rows := make([][]string, 0, len(out))
	for _, p := range out {
		rows = append(rows, []string{p.Job, p.Backend, yesNo(p.Paused)})
	}
	c.emit(out, []string{"JOB", "BACKEND", "PAUSED"}, rows)
	return exitOK
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
