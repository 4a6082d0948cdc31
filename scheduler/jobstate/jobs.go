package jobstate

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// RegisteredJob is a job as the live instances registered it.
type RegisteredJob struct {
	Spec     batontype.JobSpec
	Replicas []string  // LockedBy of the live instances that run it
	Since    time.Time // start of the oldest of them
	// PausedOn lists the Replicas that paused the job on their own
	// instance (scheduler Job.Pause, registered as the option "paused").
	PausedOn []string
	// Gone lists, for a job that no live instance runs, the replicas
	// that died with it registered (Replicas is empty then): it is still
	// listed, from the registry's departed instances (ListAll).
	Gone []string
	// LastRuns are an unlocked job's latest run on each replica that has
	// run it, as each instance last published it (JobSpec.LastRun), in
	// the order of Replicas. Empty for a locked job: the ledger has its
	// runs.
	LastRuns []batontype.RunRecord
	// Skips are the job's skipped ticks on each replica that skipped
	// some, as each instance last published them (JobSpec.Skips), in the
	// order of Replicas (of Gone, for a job no live instance runs).
	Skips []ReplicaSkips
}

// ReplicaSkips is one replica's skipped ticks of a job.
type ReplicaSkips struct {
	LockedBy string `json:"locked_by"`
	batontype.Skips
}

// SkipTotals returns the job's skips summed over its replicas
// (batontype.Skips.Merge).
func (r RegisteredJob) SkipTotals() batontype.Skips {
	var t batontype.Skips
	for _, rs := range r.Skips {
		t.Merge(rs.Skips)
	}
	return t
}

// PausedEverywhere reports whether every live replica of the job paused
// it on its own instance, so none runs its ticks. A pause cluster-wide
// is in the control state (batontype.ControlState), not here.
func (r RegisteredJob) PausedEverywhere() bool {
	return len(r.Replicas) > 0 && len(r.PausedOn) == len(r.Replicas)
}

// optPaused is the JobSpec option of a job paused on its instance.
const optPaused = "paused"

// Jobs merges the jobs of the registry's instances by name, sorted by
// name. The spec is the one of the first instance (by LockedBy), without
// the option "paused", the LastRun and the Skips, which are per replica:
// PausedOn, LastRuns and Skips list them.
func Jobs(insts []batontype.Instance) []RegisteredJob {
	by := make(map[string]*RegisteredJob)
	var names []string
	for _, inst := range insts {
		for _, j := range inst.Jobs {
			paused := slices.Contains(j.Options, optPaused)
			last, skips := j.LastRun, j.Skips
			j.LastRun, j.Skips = nil, nil
			r := by[j.Name]
			if r == nil {
				if paused {
					j.Options = slices.DeleteFunc(slices.Clone(j.Options), func(o string) bool { return o == optPaused })
					if len(j.Options) == 0 {
						j.Options = nil
					}
				}
				r = &RegisteredJob{Spec: j, Since: inst.Started}
				by[j.Name] = r
				names = append(names, j.Name)
			}
			r.Replicas = append(r.Replicas, inst.LockedBy)
			if last != nil {
				r.LastRuns = append(r.LastRuns, *last)
			}
			if skips != nil {
				r.Skips = append(r.Skips, ReplicaSkips{LockedBy: inst.LockedBy, Skips: *skips})
			}
			if paused {
				r.PausedOn = append(r.PausedOn, inst.LockedBy)
			}
			if inst.Started.Before(r.Since) {
				r.Since = inst.Started
			}
		}
	}
	slices.Sort(names)
	out := make([]RegisteredJob, len(names))
	for i, n := range names {
		out[i] = *by[n]
	}
	return out
}

// KnownFrom returns the earliest time the job is known to have existed:
// the start of its oldest live instance, or the tick (the start, for a
// manual run) of the oldest of runs if that is earlier. Ticks before it
// are not counted as missed.
func (r RegisteredJob) KnownFrom(runs []batontype.RunRecord) time.Time {
	known := r.Since
	for _, run := range runs {
		t := run.Tick
		if t.IsZero() {
			t = run.Started
		}
		if t.Before(known) {
			known = t
		}
	}
	return known
}

// Job is a registered job as an operator sees it: its registration, its
// next tick and, for a locked job whose provider keeps a ledger, its
// latest run and latest success.
type Job struct {
	RegisteredJob
	NextTick    time.Time            // first tick after now; zero if the schedule has none or cannot be read
	LastRun     *batontype.RunRecord // latest run in the ledger; nil if none
	LastSuccess *batontype.RunRecord // latest successful run; nil if none
	Err         error                // reading the ledger failed
}

// List returns the jobs that insts (the registry's live instances)
// registered, merged and sorted as Jobs does, each with its next tick
// after now and, from led (nil for none), the latest run and latest
// success of each locked job; for an unlocked job, the latest and the
// latest successful of its replicas' LastRuns. A ledger error is reported
// in that job's Err; the other jobs are still read.
func List(ctx context.Context, insts []batontype.Instance, led lockprovider.Ledger, now time.Time) []Job {
	return list(ctx, Jobs(insts), led, now)
}

// list is List of registered jobs.
func list(ctx context.Context, rjs []RegisteredJob, led lockprovider.Ledger, now time.Time) []Job {
	out := make([]Job, len(rjs))
	for i, rj := range rjs {
		j := Job{RegisteredJob: rj}
		s := rj.Spec
		if sched, err := ParseSchedule(s.Schedule, s.TimeZone); err == nil {
			j.NextTick = sched.Next(now)
		}
		for _, r := range rj.LastRuns {
			if j.LastRun == nil || r.Started.After(j.LastRun.Started) {
				j.LastRun = &r
			}
			if r.Outcome == batontype.OutcomeSucceeded && (j.LastSuccess == nil || r.Started.After(j.LastSuccess.Started)) {
				j.LastSuccess = &r
			}
		}
		if led != nil && s.Locked {
			last, succ, err := led.LastRuns(ctx, s.Name)
			j.Err = err
			if last.Token != 0 {
				j.LastRun = &last
			}
			if succ.Token != 0 {
				j.LastSuccess = &succ
			}
		}
		out[i] = j
	}
	return out
}

// ListAll is List over the jobs Registered finds among the live and
// departed instances: a job whose every replica died is listed with no
// live Replicas and the dead ones in Gone, rather than vanishing with
// them.
func ListAll(ctx context.Context, live []batontype.Instance, departed []batontype.Departed, led lockprovider.Ledger, now time.Time) []Job {
	return list(ctx, Registered(live, departed), led, now)
}

// Registered is Jobs over the live instances and, for the jobs none of
// them runs, the gone ones among departed (lockprovider.Departures): those
// jobs have no Replicas and list the dead replicas in Gone (PausedOn is
// empty: nothing runs them). Replicas that left (a clean shutdown) are not
// counted: their jobs were taken away on purpose.
func Registered(live []batontype.Instance, departed []batontype.Departed) []RegisteredJob {
	running := map[string]bool{}
	for _, in := range live {
		for _, j := range in.Jobs {
			running[j.Name] = true
		}
	}
	var orphans []batontype.Instance
	for _, d := range departed {
		if d.Left {
			continue
		}
		in := d.Instance
		in.Jobs = slices.DeleteFunc(slices.Clone(in.Jobs), func(j batontype.JobSpec) bool { return running[j.Name] })
		if len(in.Jobs) > 0 {
			orphans = append(orphans, in)
		}
	}
	out := Jobs(live)
	if len(orphans) == 0 {
		return out
	}
	for _, rj := range Jobs(orphans) {
		rj.Gone, rj.Replicas, rj.PausedOn = rj.Replicas, nil, nil
		out = append(out, rj)
	}
	slices.SortFunc(out, func(a, b RegisteredJob) int { return strings.Compare(a.Spec.Name, b.Spec.Name) })
	return out
}
