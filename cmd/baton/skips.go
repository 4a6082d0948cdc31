package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// skipJSON is one replica's skipped ticks of one job.
type skipJSON struct {
	Backend string `json:"backend"`
	Job     string `json:"job"`
	jobstate.ReplicaSkips
}

func skipsCommand() command {
	return command{
		group: "jobs", name: "skips", args: "[JOB...]",
		help: "list the ticks each replica did not run, by reason (held, stale_tick, still_running, paused, missed), with the latest",
		run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
			for _, name := range fs.Args() {
				if err := batontype.ValidateName(name); err != nil {
					fmt.Fprintln(c.stderr, err)
					return exitUsage
				}
			}
			return c.jobSkips(ctx, fs.Args())
		},
	}
}

// jobSkips lists what the registry's instances (live, and gone ones for a
// job no live one runs) published of their skipped ticks.
func (c *cli) jobSkips(ctx context.Context, only []string) int {
	out := []skipJSON{}
	known := map[string]bool{}
	for _, b := range c.backends {
		live, departed, ok, _ := c.registry(ctx, b) // replicas.go; an error is reported
		if !ok {
			continue
		}
		for _, j := range jobstate.ListAll(ctx, live, departed, nil, c.now) {
			if len(only) > 0 && !slices.Contains(only, j.Spec.Name) {
				continue
			}
			known[j.Spec.Name] = true
			for _, rs := range j.Skips {
				out = append(out, skipJSON{Backend: b.name, Job: j.Spec.Name, ReplicaSkips: rs})
			}
		}
	}
	rows := make([][]string, 0, len(out))
	for _, s := range out {
		row := []string{s.Job, s.Backend, s.LockedBy}
		for _, r := range batontype.SkipReasons() {
			row = append(row, strconv.FormatInt(s.Count(r), 10))
		}
		last := s.Last.Reason + " at tick " + stamp(s.Last.Tick)
		if s.Last.Holder != "" {
			last += " (held by " + s.Last.Holder + ")"
		}
		rows = append(rows, append(row, last))
	}
	c.emit(out, []string{"JOB", "BACKEND", "REPLICA", "HELD", "STALE TICK", "STILL RUNNING", "PAUSED", "MISSED", "LATEST"}, rows)
	code := exitOK
	for _, name := range only {
		if !known[name] && c.failed == 0 {
			fmt.Fprintf(c.stderr, "baton: job %q not found: no live or gone scheduler instance has it (%s)\n", name, c.looked())
			code = exitNotFound
		}
	}
	if len(out) == 0 && code == exitOK && c.opts.output != "json" {
		fmt.Fprintf(c.stderr, "baton: no replica published a skipped tick (%s)\n", c.looked())
	}
	return c.exit(code)
}
