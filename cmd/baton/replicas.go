package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

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
		reg, ok := b.p.(lockprovider.Registry)
		if !ok {
			continue
		}
		live, err := reg.Instances(ctx)
		if err != nil {
			c.fail(b, "registry", err)
			failed = true
			continue
		}
		var gone []batontype.Departed
		if d, ok := b.p.(lockprovider.Departures); ok {
			if gone, err = d.Departed(ctx); err != nil {
				c.fail(b, "departed instances", err)
				failed = true
				continue
			}
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
			fmt.Fprintln(c.stderr, "baton: no replica registered in "+c.looked())
		}
	}
	if failed {
		return exitBackend
	}
	return exitOK
}

// openRuns returns the runs inst left open: for each of its locked jobs
// (at most maxOpenReads), the ledger's last run if inst started it and it
// has no end.
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
		last, _, err := led.LastRuns(ctx, j.Name)
		if err != nil {
			return out, err
		}
		if last.Token != 0 && last.Outcome == batontype.OutcomeRunning && last.LockedBy == inst.LockedBy {
			out = append(out, last)
		}
	}
	return out, nil
}
