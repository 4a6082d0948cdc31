package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler/jobstate"
)

type jobJSON struct {
	Backend     string               `json:"backend"`
	Name        string               `json:"name"`
	Schedule    string               `json:"schedule"`
	TimeZone    string               `json:"time_zone,omitempty"`
	Locked      bool                 `json:"locked"`
	AtMostFor   string               `json:"at_most_for,omitempty"`
	AtMostMS    int64                `json:"at_most_for_ms,omitempty"`
	AtLeastFor  string               `json:"at_least_for,omitempty"`
	AtLeastMS   int64                `json:"at_least_for_ms,omitempty"`
	Options     []string             `json:"options,omitempty"`
	NextTick    time.Time            `json:"next_tick,omitzero"`
	LastRun     *batontype.RunRecord `json:"last_run,omitempty"`
	LastSuccess *batontype.RunRecord `json:"last_success,omitempty"`
	Replicas    []string             `json:"replicas"`
	Gone        []string             `json:"gone,omitempty"` // for a job no live replica runs: the replicas that died with it registered
	// State is the job's state: "paused" (cluster-wide, or on every live
	// replica), "missed", "failed" or "unfinished" (jobs check's verdict
	// on its latest due tick), "running" (its last run is still going),
	// "ok", or "unlocked" (nothing is recorded of an unlocked job).
	State string `json:"state"`
	// Paused: ticks are skipped on every replica (State "paused"), by
	// jobs pause (PausedCluster) or by a pause on each replica's own
	// instance (PausedOn lists those that paused it).
	Paused        bool     `json:"paused,omitempty"`
	PausedCluster bool     `json:"paused_cluster,omitempty"`
	PausedOn      []string `json:"paused_on,omitempty"`

	// LastRunUnfinished: the last run never ended although its lease did
	// (its process died), as for runJSON.Unfinished.
	LastRunUnfinished bool `json:"last_run_unfinished,omitempty"`
}

type runJSON struct {
	Backend string `json:"backend"`
	batontype.RunRecord
	Duration   string `json:"duration,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"` // the same in milliseconds
	// Unfinished: the run has no end (outcome "") and its lease is no
	// longer held with its token, so it will never get one: its process
	// died (the same test as the "unfinished" of jobs check).
	Unfinished bool `json:"unfinished,omitempty"`
}

// abandoned reports whether run, read from b's ledger, never ended
// although its lease did (jobstate.Unfinished). info is the job's lease
// as Inspect read it after the ledger; without an Inspector (info nil)
// nothing is reported.
func abandoned(info *batontype.LeaseInfo, run batontype.RunRecord) bool {
	return info != nil && jobstate.Unfinished(run, batontype.JobSpec{}, info, time.Time{})
}

// jobLease reads the lease of job on b when some run of runs has not
// ended, for abandoned; nil when none is open or b has no Inspector.
func jobLease(ctx context.Context, b backend, job string, runs ...batontype.RunRecord) (*batontype.LeaseInfo, error) {
	in, ok := b.p.(lockprovider.Inspector)
	if !ok || !slices.ContainsFunc(runs, func(r batontype.RunRecord) bool { return r.Outcome == batontype.OutcomeRunning }) {
		return nil, nil
	}
	info, err := in.Inspect(ctx, job)
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// outcomeText is a run's outcome as the tables show it.
// runOutcomes are what jobs runs --outcome selects: the recorded
// outcomes, "running" and "unfinished" (a run whose lease ended without a
// recorded end).
var runOutcomes = []string{"succeeded", "failed", "panicked", "lock_lost", "shut_down", "running", "unfinished"}

// parseOutcomes reads --outcome; nil selects every run.
func parseOutcomes(s string) (map[string]bool, error) {
	if s == "" {
		return nil, nil
	}
	want := map[string]bool{}
	for _, o := range strings.Split(s, ",") {
		o = strings.TrimSpace(o)
		if !slices.Contains(runOutcomes, o) {
			return nil, fmt.Errorf("--outcome %q: want one or more of %s", o, strings.Join(runOutcomes, ", "))
		}
		want[o] = true
	}
	return want, nil
}

func outcomeText(r batontype.RunRecord, unfinished bool) string {
	if unfinished {
		return "unfinished"
	}
	return r.Outcome.String()
}

type checkJSON struct {
	Backend   string             `json:"backend"`
	OK        bool               `json:"ok"`
	Error     string             `json:"error,omitempty"` // the backend could not be checked
	Instances []string           `json:"instances"`
	Checked   []string           `json:"checked"`
	Paused    []string           `json:"paused,omitempty"` // not checked: paused cluster-wide or on every live replica
	Problems  []jobstate.Problem `json:"problems"`
	// Summary is a line per job with problems: how many of each kind,
	// and the first and last such tick.
	Summary []problemSummary `json:"summary,omitempty"`
}

type problemSummary struct {
	Job        string    `json:"job"`
	Missed     int       `json:"missed"`
	Failed     int       `json:"failed"`
	Unfinished int       `json:"unfinished"`
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
}

// summarize counts problems per job, in the order the jobs first appear.
func summarize(ps []jobstate.Problem) []problemSummary {
	var out []problemSummary
	at := map[string]int{}
	for _, p := range ps {
		i, ok := at[p.Job]
		if !ok {
			i = len(out)
			at[p.Job] = i
			out = append(out, problemSummary{Job: p.Job, First: p.Tick, Last: p.Tick})
		}
		s := &out[i]
		switch p.Kind {
		case "missed":
			s.Missed++
		case "failed":
			s.Failed++
		case "unfinished":
			s.Unfinished++
		}
		if p.Tick.Before(s.First) {
			s.First = p.Tick
		}
		if p.Tick.After(s.Last) {
			s.Last = p.Tick
		}
	}
	return out
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// parseSince accepts a duration back from now ("24h") or an RFC 3339 time.
func (c *cli) parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: must not be negative", s)
		}
		return c.now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q: neither a duration (24h) nor an RFC 3339 time", s)
	}
	return t, nil
}

func jobCommands() []command {
	var (
		since    string
		limit    int
		grace    time.Duration
		outcomes string
	)
	return append([]command{
		{
			group: "jobs", name: "ls", help: "list registered jobs: schedule, next tick, last run, last success, live replicas",
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 0) {
					return exitUsage
				}
				return c.jobsList(ctx)
			},
		},
		{
			group: "jobs", name: "runs", args: "JOB", help: "list recorded runs of a job, newest first",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&since, "since", "", "only runs started since: a duration back (24h) or an RFC 3339 time")
				fs.IntVar(&limit, "limit", 20, "at most this many runs per backend")
				fs.StringVar(&outcomes, "outcome", "", "only runs with these outcomes, comma-separated: "+strings.Join(runOutcomes, ", ")+" (of the newest "+strconv.Itoa(batontype.DefaultMaxRuns)+" runs per backend)")
			},
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				from, err := c.parseSince(since)
				if err == nil && (limit <= 0 || limit > batontype.MaxRuns) {
					err = fmt.Errorf("--limit must be between 1 and %d", batontype.MaxRuns)
				}
				var want map[string]bool
				if err == nil {
					want, err = parseOutcomes(outcomes)
				}
				if err != nil {
					fmt.Fprintf(c.stderr, "baton: %v\n", err)
					return exitUsage
				}
				return c.jobRuns(ctx, fs.Arg(0), from, limit, want)
			},
		},
		{
			group: "jobs", name: "check", args: "[JOB...]",
			help: "exit 1 if a due tick was missed, failed or never finished, or no scheduler is alive",
			flags: func(fs *flag.FlagSet) {
				fs.DurationVar(&grace, "grace", time.Minute, "how long after its tick a run may start (0: no grace)")
				fs.StringVar(&since, "since", "", "check every tick since (duration back or RFC 3339), not only the latest")
			},
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				from, err := c.parseSince(since)
				if err != nil || grace < 0 {
					if err == nil {
						err = errors.New("--grace must not be negative")
					}
					fmt.Fprintf(c.stderr, "baton: %v\n", err)
					return exitUsage
				}
				if grace == 0 {
					grace = time.Nanosecond // Check reads a zero Grace as its default, one minute
				}
				for _, name := range fs.Args() {
					if err := batontype.ValidateName(name); err != nil {
						fmt.Fprintln(c.stderr, err)
						return exitUsage
					}
				}
				return c.jobsCheck(ctx, jobstate.CheckOptions{Grace: grace, Since: from, Now: c.now, Jobs: fs.Args()})
			},
		},
		skipsCommand(), // skips.go
	}, jobControlCommands()...) // control.go
}

func (c *cli) jobsList(ctx context.Context) int {
	out := []jobJSON{}
	for _, b := range c.backends {
		js, err := c.listJobs(ctx, b)
		if err != nil {
			continue // reported; the other backends' jobs are still listed
		}
		out = append(out, js...)
	}
	rows := make([][]string, 0, len(out))
	for _, j := range out {
		last, lastOK := "-", "-"
		if r := j.LastRun; r != nil {
			if c.opts.wide {
				last = fmt.Sprintf("%s %s on %s", stamp(r.Started), outcomeText(*r, j.LastRunUnfinished), r.LockedBy)
				if d := r.Duration(); d > 0 {
					last += " (" + d.Round(time.Millisecond).String() + ")"
				}
			} else { // the replica is in --wide and jobs runs
				last = c.ago(r.Started) + " " + outcomeText(*r, j.LastRunUnfinished)
			}
		}
		if r := j.LastSuccess; r != nil {
			lastOK = stamp(r.Finished)
			if !c.opts.wide {
				lastOK = c.ago(r.Finished)
			}
		}
		sched := c.brief(j.Schedule)
		if j.TimeZone != "" && j.TimeZone != "UTC" && !strings.HasPrefix(sched, "@every") {
			sched += " (" + j.TimeZone + ")"
		}
		replicas := strconv.Itoa(len(j.Replicas))
		if len(j.PausedOn) > 0 && !j.Paused {
			replicas += fmt.Sprintf(", %d paused", len(j.PausedOn))
		}
		if len(j.Gone) > 0 {
			replicas += " (" + strings.Join(j.Gone, ",") + " gone)"
		}
		if c.opts.wide {
			replicas += " " + strings.Join(j.Replicas, ",")
			if len(j.PausedOn) > 0 {
				replicas += " (paused on " + strings.Join(j.PausedOn, ",") + ")"
			}
		}
		rows = append(rows, []string{j.Name, j.Backend, sched, j.State, c.moment(j.NextTick), last, lastOK, replicas})
	}
	c.emit(out, []string{"JOB", "BACKEND", "SCHEDULE", "STATE", "NEXT TICK", "LAST RUN", "LAST SUCCESS", "REPLICAS"}, rows)
	return c.exit(exitOK)
}

// listJobs reads b's jobs with their state; an error is reported (and
// returned, so the caller skips b).
func (c *cli) listJobs(ctx context.Context, b backend) ([]jobJSON, error) {
	reg, ok := b.p.(lockprovider.Registry)
	if !ok {
		return nil, nil
	}
	insts, err := reg.Instances(ctx)
	if err != nil {
		c.fail(b, "registry", err)
		return nil, err
	}
	led, _ := b.p.(lockprovider.Ledger)
	paused, err := pausedJobs(ctx, b)
	if err != nil {
		c.fail(b, "control state", err)
		return nil, err
	}
	// The verdict on each locked job's latest due tick, as jobs check
	// (and the status page) give it, with jobs check's default grace.
	problems := map[string]*jobstate.Problem{}
	if led != nil && len(insts) > 0 {
		rep, err := jobstate.Check(ctx, b.p, jobstate.CheckOptions{Now: c.now})
		if err != nil && !errors.Is(err, jobstate.ErrNoInstances) {
			c.fail(b, "check", err)
			return nil, err
		}
		for _, p := range rep.Problems {
			problems[p.Job] = &p // oldest first: the latest wins
		}
	}
	var departed []batontype.Departed
	if d, ok := b.p.(lockprovider.Departures); ok {
		if departed, err = d.Departed(ctx); err != nil {
			c.fail(b, "departed instances", err)
			return nil, err
		}
	}
	var out []jobJSON
	for _, js := range jobstate.ListAll(ctx, insts, departed, led, c.now) {
		s := js.Spec
		if js.Err != nil {
			c.fail(b, "ledger", js.Err)
			return nil, js.Err
		}
		j := jobJSON{Backend: b.name, Name: s.Name, Schedule: s.Schedule, TimeZone: s.TimeZone, Locked: s.Locked,
			AtMostFor: dur(s.AtMostFor), AtMostMS: s.AtMostFor.Milliseconds(), AtLeastFor: dur(s.AtLeastFor),
			AtLeastMS: s.AtLeastFor.Milliseconds(), Options: s.Options, Replicas: js.Replicas, Gone: js.Gone,
			PausedCluster: slices.Contains(paused, s.Name), PausedOn: js.PausedOn,
			NextTick: js.NextTick, LastRun: js.LastRun, LastSuccess: js.LastSuccess}
		j.Paused = j.PausedCluster || js.PausedEverywhere()
		var info *batontype.LeaseInfo
		if last := js.LastRun; last != nil {
			if info, err = jobLease(ctx, b, s.Name, *last); err != nil {
				c.fail(b, "inspect", err)
				return nil, err
			}
			j.LastRunUnfinished = abandoned(info, *last)
		}
		j.State = jobstate.State(js, j.PausedCluster, problems[s.Name], info, c.now)
		out = append(out, j)
	}
	return out, nil
}

func (c *cli) jobRuns(ctx context.Context, job string, since time.Time, limit int, outcomes map[string]bool) int {
	out := []runJSON{}
	for _, b := range c.backends {
		led, ok := b.p.(lockprovider.Ledger)
		if !ok {
			continue
		}
		// With --outcome the newest runs are read and filtered here: the
		// ledger selects by time only.
		read := limit
		if outcomes != nil {
			read = max(limit, batontype.DefaultMaxRuns)
		}
		runs, err := led.Runs(ctx, batontype.RunQuery{Job: job, Since: since, Limit: read})
		if err != nil {
			c.fail(b, "ledger", err)
			continue
		}
		if len(runs) == read {
			// The runs asked for (--since) may go further back: say so,
			// or an older run would look as if it never happened.
			fmt.Fprintf(c.stderr, "baton: %s: read the newest %d runs only; there may be more (--limit)\n", b.name, read)
		}
		info, err := jobLease(ctx, b, job, runs...)
		if err != nil {
			c.fail(b, "inspect", err)
			continue
		}
		n := 0
		for _, r := range runs {
			rj := runJSON{Backend: b.name, RunRecord: r, Unfinished: abandoned(info, r)}
			if outcomes != nil && !outcomes[outcomeText(r, rj.Unfinished)] {
				continue
			}
			if n++; n > limit {
				break
			}
			if !r.Finished.IsZero() {
				d := r.Duration()
				rj.Duration, rj.DurationMS = d.String(), new(d.Milliseconds())
			}
			out = append(out, rj)
		}
	}
	if len(out) == 0 && c.failed == 0 {
		// No runs in range: tell an unknown (say misspelt) job apart
		// from a known job that did not run.
		known, code := c.jobKnown(ctx, job)
		if code != exitOK {
			return code
		}
		if !known {
			fmt.Fprintf(c.stderr, "baton: job %q not found: no live scheduler instance has it and the ledger holds no run of it (%s)\n", job, c.looked())
			return exitNotFound
		}
	}
	rows := make([][]string, 0, len(out))
	cutAny := false
	for _, r := range out {
		flags := []string{}
		if r.CatchUp {
			flags = append(flags, "catch-up")
		}
		if r.Manual {
			flags = append(flags, "manual")
		}
		if !r.ReleasedAt.IsZero() {
			flags = append(flags, "force-released")
		}
		errText, cut := c.cut(r.Error, 60)
		cutAny = cutAny || cut
		rows = append(rows, []string{stamp(r.Tick), r.Backend, r.LockedBy, strconv.FormatInt(r.Token, 10),
			stamp(r.Started), dash(r.Duration), outcomeText(r.RunRecord, r.Unfinished), dash(strings.Join(flags, ",")), dash(errText)})
	}
	c.emit(out, []string{"TICK", "BACKEND", "REPLICA", "TOKEN", "STARTED", "DURATION", "OUTCOME", "FLAGS", "ERROR"}, rows)
	if c.opts.output == "table" {
		// Who and when fit no column: a line each under the table
		// (-o json has released_by and released_at).
		for _, r := range out {
			if !r.ReleasedAt.IsZero() {
				fmt.Fprintf(c.stdout, "token %d on %s: lock force-released by %s at %s\n", r.Token, r.Backend, dash(r.ReleasedBy), stamp(r.ReleasedAt))
			}
		}
	}
	if cutAny && c.opts.output == "table" {
		fmt.Fprintln(c.stderr, "baton: long errors are cut; --wide (or -o json) shows them whole")
	}
	return c.exit(exitOK)
}

// jobKnown reports whether a live instance of any backend registers job,
// or any backend's ledger holds a run of it.
func (c *cli) jobKnown(ctx context.Context, job string) (bool, int) {
	for _, b := range c.backends {
		known, err := jobKnownOn(ctx, b, job)
		if err != nil {
			return false, c.fail(b, "registry and ledger", err)
		}
		if known {
			return true, exitOK
		}
	}
	return false, exitOK
}

// jobKnownOn reports whether a live instance on b registers job, or b's
// ledger holds a run of it.
func jobKnownOn(ctx context.Context, b backend, job string) (bool, error) {
	if reg, ok := b.p.(lockprovider.Registry); ok {
		insts, err := reg.Instances(ctx)
		if err != nil {
			return false, err
		}
		for _, rj := range jobstate.Jobs(insts) {
			if rj.Spec.Name == job {
				return true, nil
			}
		}
	}
	if led, ok := b.p.(lockprovider.Ledger); ok {
		last, _, err := led.LastRuns(ctx, job)
		if err != nil {
			return false, err
		}
		if last.Token != 0 {
			return true, nil
		}
	}
	return false, nil
}

func (c *cli) jobsCheck(ctx context.Context, opts jobstate.CheckOptions) int {
	out := []checkJSON{}
	alive, problems := false, 0
	for _, b := range c.backends {
		_, ok1 := b.p.(lockprovider.Registry)
		_, ok2 := b.p.(lockprovider.Ledger)
		if !ok1 || !ok2 {
			continue
		}
		rep, err := jobstate.Check(ctx, b.p, opts)
		if err != nil && !errors.Is(err, jobstate.ErrNoInstances) {
			c.fail(b, "check", err)
			out = append(out, checkJSON{Backend: b.name, Error: c.explain(b, err), Instances: []string{}, Checked: []string{}, Problems: []jobstate.Problem{}})
			continue
		}
		cj := checkJSON{Backend: b.name, OK: rep.OK(), Instances: []string{}, Checked: rep.Checked, Paused: rep.Paused, Problems: rep.Problems, Summary: summarize(rep.Problems)}
		if cj.Checked == nil {
			cj.Checked = []string{}
		}
		if cj.Problems == nil {
			cj.Problems = []jobstate.Problem{}
		}
		for _, i := range rep.Instances {
			cj.Instances = append(cj.Instances, i.LockedBy)
		}
		alive = alive || len(rep.Instances) > 0
		problems += len(rep.Problems)
		out = append(out, cj)
	}
	if c.opts.output == "json" {
		c.emit(out, nil, nil)
	} else {
		var rows [][]string
		for _, cj := range out {
			for _, p := range cj.Problems {
				detail := "no replica claimed it"
				switch h, r := p.Holder, p.Blocker; {
				case r != nil:
					detail = fmt.Sprintf("no replica could claim it: the run of %s started at %s (token %d) held the lock", dash(r.LockedBy), stamp(r.Started), r.Token)
					if r.Outcome == batontype.OutcomeRunning {
						detail += " and has not ended"
					} else {
						detail += " until " + stamp(r.Finished)
					}
				case h != nil && h.GrantedAt.After(p.Tick):
					detail = fmt.Sprintf("no replica claimed it; since %s, after the tick, the lock is held by %s with token %d, until %s",
						stamp(h.GrantedAt), dash(h.LockedBy), h.Token, c.when(h.Until))
				case h != nil:
					detail = fmt.Sprintf("no replica could claim it: the lock is held by %s with token %d since %s, until %s",
						dash(h.LockedBy), h.Token, stamp(h.GrantedAt), c.when(h.Until))
				}
				if p.Kind == "unfinished" { // its outcome reads "running", and it is not
					detail = fmt.Sprintf("started on %s at %s, token %d; never ended", p.Run.LockedBy, stamp(p.Run.Started), p.Run.Token)
				} else if p.Run != nil {
					detail = fmt.Sprintf("%s on %s, token %d", p.Run.Outcome, p.Run.LockedBy, p.Run.Token)
					if p.Run.Error != "" {
						detail += ": " + strings.ReplaceAll(p.Run.Error, "\n", " ")
					}
				}
				rows = append(rows, []string{p.Job, cj.Backend, stamp(p.Tick), p.Kind, detail})
			}
		}
		if len(rows) > 0 {
			c.emit(nil, []string{"JOB", "BACKEND", "TICK", "PROBLEM", "DETAIL"}, rows)
		}
		if len(rows) > 1 {
			// Per job, so a long --since list reads at a glance.
			var sum [][]string
			for _, cj := range out {
				for _, s := range cj.Summary {
					sum = append(sum, []string{s.Job, cj.Backend, strconv.Itoa(s.Missed), strconv.Itoa(s.Failed), strconv.Itoa(s.Unfinished), stamp(s.First), stamp(s.Last)})
				}
			}
			fmt.Fprintln(c.stdout)
			c.emit(nil, []string{"JOB", "BACKEND", "MISSED", "FAILED", "UNFINISHED", "FIRST", "LAST"}, sum)
		}
		for _, cj := range out {
			if cj.Error != "" {
				fmt.Fprintf(c.stdout, "%s: not checked: the backend failed (see stderr)\n", cj.Backend)
				continue
			}
			fmt.Fprintf(c.stdout, "%s: %d live instance(s), %d locked job(s) checked, %d problem(s)",
				cj.Backend, len(cj.Instances), len(cj.Checked), len(cj.Problems))
			if len(cj.Paused) > 0 {
				fmt.Fprintf(c.stdout, ", %d paused, not checked: %s", len(cj.Paused), strings.Join(cj.Paused, ", "))
			}
			fmt.Fprintln(c.stdout)
		}
	}
	if c.failed != 0 {
		return c.failed // problems elsewhere are shown; a backend that was not checked is not healthy
	}
	if !alive {
		fmt.Fprintf(c.stderr, "baton: no live scheduler instance in any registry (%s)\n", c.looked())
		return exitProblem
	}
	if problems > 0 {
		return exitProblem
	}
	// A job named on the command line that no live or gone instance has
	// as a locked job was not checked: a misspelt name must not pass as
	// healthy. (A job whose replicas all died is checked: jobstate.Check.)
	code := exitOK
	for _, name := range opts.Jobs {
		found := false
		for _, cj := range out {
			found = found || slices.Contains(cj.Checked, name) || slices.Contains(cj.Paused, name)
		}
		if !found {
			fmt.Fprintf(c.stderr, "baton: job %q not checked: no live or gone scheduler instance has it as a locked job (%s)\n", name, c.looked())
			code = exitNotFound
		}
	}
	return code
}
