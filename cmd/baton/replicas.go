package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// maxOpenReads bounds the ledger reads per gone replica for what it was
// running: one per locked job.
const maxOpenReads = 100

type replicaJSON struct {
	Backend string `json:"backend"`
	jobstate.Replica
	// Running are the runs a gone replica left open: the ledger's last
	// run of its locked jobs, started by it, with no end.
	Running []batontype.RunRecord `json:"running,omitempty"`
}

func replicaCommands() []command {
	return []command{{
		group: "replicas", name: "ls", help: "list scheduler replicas: alive, late, gone (died without a shutdown, kept an hour) or left, with what a gone one was running",
		run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
			if !c.needArgs(fs, 0) {
				return exitUsage
			}
			return c.replicasList(ctx)
		},
	}}
}

func (c *cli) replicasList(ctx context.Context) int {
	out := []replicaJSON{}
	failed := false
	for _, b := range c.backends {
		live, gone, ok, err := c.registry(ctx, b)
		if err != nil {
			failed = true
		}
		if !ok {
			continue
		}
		led, _ := b.p.(lockprovider.Ledger)
		for _, r := range jobstate.Replicas(live, gone, c.now) {
			rj := replicaJSON{Backend: b.name, Replica: r}
			if r.State == jobstate.ReplicaGone && led != nil {
				if rj.Running, err = openRuns(ctx, led, r.Instance); err != nil {
					c.fail(b, "ledger", err)
					failed = true
				}
			}
			out = append(out, rj)
		}
	}
	if c.opts.output == "json" {
		c.emit(out, nil, nil)
	} else {
		rows := make([][]string, 0, len(out))
		for _, r := range out {
			note := "-"
			switch r.State {
			case jobstate.ReplicaGone:
				note = "died at " + stamp(r.Until) + ", left without shutting down"
			case jobstate.ReplicaLeft:
				note = "shut down at " + stamp(r.Until)
			}
			for _, run := range r.Running {
				note += fmt.Sprintf("; was running %s (token %d, started %s)", run.Job, run.Token, stamp(run.Started))
			}
			rows = append(rows, []string{r.LockedBy, r.Backend, r.State, dash(r.Version), c.ago(r.Started), c.ago(r.Heartbeat), strconv.Itoa(len(r.Jobs)), note})
		}
		c.emit(nil, []string{"REPLICA", "BACKEND", "STATE", "VERSION", "STARTED", "LAST SEEN", "JOBS", "NOTE"}, rows)
		if len(out) == 0 {
			fmt.Fprintf(c.stderr, "baton: no replica registered (%s)\n", c.looked())
		}
	}
	if failed {
		return exitBackend
	}
	return exitOK
}

// registry reads b's live and departed scheduler instances; ok is false
// when b keeps no registry or a read failed (reported, and returned).
func (c *cli) registry(ctx context.Context, b backend) (live []batontype.Instance, departed []batontype.Departed, ok bool, err error) {
	reg, isReg := b.p.(lockprovider.Registry)
	if !isReg {
		return nil, nil, false, nil
	}
	if live, err = reg.Instances(ctx); err != nil {
		c.fail(b, "registry", err)
		return nil, nil, false, err
	}
	if d, isDep := b.p.(lockprovider.Departures); isDep {
		if departed, err = d.Departed(ctx); err != nil {
			c.fail(b, "departed instances", err)
			return nil, nil, false, err
		}
	}
	return live, departed, true, nil
}

// openRuns returns the runs inst left open: for each of its locked jobs
// (at most maxOpenReads), the newest run started before its entry lapsed
// if inst started it and it has no end. Not the ledger's last run: once
// the dead run's lease ended another replica runs the job, and the run
// the dead replica left is no longer the last.
func openRuns(ctx context.Context, led lockprovider.Ledger, inst batontype.Instance) ([]batontype.RunRecord, error) {
	var out []batontype.RunRecord
	n := 0
	for _, j := range inst.Jobs {
		if !j.Locked {
			continue
		}
		if n++; n > maxOpenReads {
			break
		}
		// Until is the backend's clock, as the runs' starts; the
		// instance's own Started is not, so it is no lower bound.
		runs, err := led.Runs(ctx, batontype.RunQuery{Job: j.Name, Until: inst.Until.Add(time.Millisecond), Limit: 1})
		if err != nil {
			return out, err
		}
		if len(runs) == 1 && runs[0].Outcome == batontype.OutcomeRunning && runs[0].LockedBy == inst.LockedBy {
			out = append(out, runs[0])
		}
	}
	return out, nil
}
