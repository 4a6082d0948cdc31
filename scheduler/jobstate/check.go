package jobstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Grace is how long after its tick a run may start (and, for a run
	// that failed, how long it has been given). A tick is due once
	// tick+Grace has passed. Zero means one minute.
	Grace time.Duration
	// Since, when set, checks every tick due in (Since, Now], at most
	// MaxCheckTicks per job. Zero means only each job's latest due tick.
	Since time.Time
	// Now is the time of the check. Zero means time.Now().
	Now time.Time
	// Jobs, when not empty, restricts the check to these names. Empty
	// means every locked job in the registry.
	Jobs []string
}

// MaxCheckTicks bounds the ticks Check examines per job.
const MaxCheckTicks = 10_000

// Problem is a tick that needs attention.
type Problem struct {
	Job  string    `json:"job"`
	Tick time.Time `json:"tick"`
	// Kind is "missed" (no replica claimed the tick), "failed" (its run
	// ended with an outcome other than succeeded; Run says which) or
	// "unfinished" (its run started and never ended although its lease
	// ran out: the process died).
	Kind string               `json:"kind"`
	Run  *batontype.RunRecord `json:"run,omitempty"`
	// Holder is the job's lease as it is held now, for the latest due
	// tick when it was missed and the lease is held (by a run still
	// going past its next tick, or by anything else holding the job's
	// lock name): who keeps the tick from being claimed. Nil otherwise,
	// or without an Inspector.
	Holder *Holder `json:"holder,omitempty"`
	// Blocker is, for a missed tick, the run that held the job's lease
	// at the tick: the newest run started before it, if it had not ended
	// by then (one still going past the tick, or one whose process died;
	// Unfinished says which). Nil when no run was in the way: no replica
	// claimed the tick.
	Blocker *batontype.RunRecord `json:"blocker,omitempty"`
}

// Holder is who holds a job's lease, from lockprovider.Inspector.
type Holder struct {
	LockedBy  string    `json:"locked_by"`
	Token     int64     `json:"token"`
	GrantedAt time.Time `json:"granted_at,omitzero"`
	Until     time.Time `json:"until,omitzero"`
}

// CheckReport is the result of Check.
type CheckReport struct {
	Now       time.Time            `json:"now"`
	Instances []batontype.Instance `json:"instances"`        // live scheduler instances
	Checked   []string             `json:"checked"`          // locked jobs checked
	Paused    []string             `json:"paused,omitempty"` // locked jobs not checked: paused cluster-wide or on every live replica
	Problems  []Problem            `json:"problems"`
}

// OK reports whether the check found nothing wrong.
func (r CheckReport) OK() bool { return len(r.Problems) == 0 && len(r.Instances) > 0 }

// ErrNoInstances is returned by Check when the registry has no live
// instance: every scheduler is down (or none publishes to the registry).
var ErrNoInstances = errors.New("jobstate: no live scheduler instance in the registry")

// Check is the dead-man's switch: from the job registry's schedules and
// the run ledger, it finds ticks of locked jobs that no replica ran, that
// failed, or whose run never finished. provider must implement
// lockprovider.Registry and lockprovider.Ledger; a job is checked only
// from the time it is known to exist (the start of its oldest live
// instance, or its oldest run in the ledger, whichever is earlier), so a
// new job does not count as missed before it existed. Jobs paused
// cluster-wide (lockprovider.Control), or on every live replica that has
// them (RegisteredJob.PausedEverywhere), are not checked: their ticks are
// skipped on purpose; the report lists them. A missed tick of a job whose
// lease is held now names the holder (Problem.Holder). A resumed job is
// checked again, but an unclaimed tick within a cluster-wide pause the
// backend remembers (batontype.ControlState.Pauses: the job's latest ended
// pause) is a paused tick, not a missed one. Pauses on replicas alone
// (Job.Pause) leave no such record: once resumed, their ticks count as
// missed. A job that only replicas that died had (gone, from
// lockprovider.Departures when the provider implements it; see Registered)
// is still checked, so its ticks count as missed once nobody runs them,
// for as long as the registry keeps the dead replicas
// (batontype.DepartedRetention). With no live instance it returns the
// report and ErrNoInstances.
func Check(ctx context.Context, provider lockprovider.Provider, opts CheckOptions) (CheckReport, error) {
	if ctx == nil {
		return CheckReport{}, batontype.ErrNilContext
	}
	reg, ok1 := provider.(lockprovider.Registry)
	led, ok2 := provider.(lockprovider.Ledger)
	if !ok1 || !ok2 {
		return CheckReport{}, invalid("provider", fmt.Sprintf("%T", provider), "does not implement lockprovider.Registry and lockprovider.Ledger", batontype.ErrInvalid)
	}
	if opts.Grace < 0 {
		return CheckReport{}, invalid("Grace", opts.Grace.String(), "must not be negative", batontype.ErrInvalidDuration)
	}
	if opts.Grace == 0 {
		opts.Grace = time.Minute
	}
	rep := CheckReport{Now: opts.Now}
	if rep.Now.IsZero() {
		rep.Now = time.Now()
	}
	insts, err := reg.Instances(ctx)
	if err != nil {
		return rep, err
	}
	rep.Instances = insts
	if len(insts) == 0 {
		return rep, ErrNoInstances
	}
	var cs batontype.ControlState
	if ctl, ok := provider.(lockprovider.Control); ok {
		if cs, err = ctl.ControlState(ctx); err != nil {
			return rep, err
		}
	}
	var departed []batontype.Departed
	if d, ok := provider.(lockprovider.Departures); ok {
		if departed, err = d.Departed(ctx); err != nil {
			return rep, err
		}
	}
	for _, js := range Registered(insts, departed) {
		if !js.Spec.Locked || (len(opts.Jobs) > 0 && !slices.Contains(opts.Jobs, js.Spec.Name)) {
			continue
		}
		if cs.IsPaused(js.Spec.Name) || js.PausedEverywhere() {
			rep.Paused = append(rep.Paused, js.Spec.Name)
			continue
		}
		rep.Checked = append(rep.Checked, js.Spec.Name)
		in, _ := provider.(lockprovider.Inspector)
		ps, err := checkJob(ctx, led, in, js, cs.PausesOf(js.Spec.Name), opts, rep.Now)
		if err != nil {
			return rep, err
		}
		rep.Problems = append(rep.Problems, ps...)
	}
	return rep, nil
}

// checkJob checks the due ticks of one job; pauses are its known
// cluster-wide pause spans.
func checkJob(ctx context.Context, led lockprovider.Ledger, in lockprovider.Inspector, js RegisteredJob, pauses []batontype.PauseSpan,
	opts CheckOptions, now time.Time) ([]Problem, error) {
	sched, err := ParseSchedule(js.Spec.Schedule, js.Spec.TimeZone)
	if err != nil {
		return nil, err
	}
	due := now.Add(-opts.Grace)
	var ticks []time.Time
	for t := sched.Prev(due); !t.IsZero() && len(ticks) < MaxCheckTicks; t = sched.Prev(t.Add(-time.Nanosecond)) {
		if !opts.Since.IsZero() && !t.After(opts.Since) {
			break
		}
		ticks = append(ticks, t)
		if opts.Since.IsZero() {
			break
		}
	}
	if len(ticks) == 0 {
		return nil, nil
	}
	oldest := ticks[len(ticks)-1]
	// A replica whose clock runs ahead may start a run a little before
	// its tick (on the backend's clock): look a minute further back.
	runs, err := led.Runs(ctx, batontype.RunQuery{Job: js.Spec.Name, Since: oldest.Add(-time.Minute), Limit: batontype.MaxRuns})
	if err != nil {
		return nil, err
	}
	// Only ticks since the job is known to exist count: the start of its
	// oldest live instance or its oldest run, whichever is earlier, so a
	// new job (also one just run by hand) is not missed before it existed.
	evidence := js.KnownFrom(runs)
	if oldest.Before(evidence) {
		older, err := led.Runs(ctx, batontype.RunQuery{Job: js.Spec.Name, Until: oldest.Add(-time.Minute), Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(older) == 0 {
			ticks = slices.DeleteFunc(ticks, func(t time.Time) bool { return t.Before(evidence) })
		}
	}
	byTick := make(map[int64]batontype.RunRecord, len(runs))
	for _, r := range runs {
		if _, seen := byTick[r.Tick.UnixMilli()]; !seen { // newest first: keep the newest run of a tick
			byTick[r.Tick.UnixMilli()] = r
		}
	}
	var out []Problem
	for i := len(ticks) - 1; i >= 0; i-- {
		t := ticks[i]
		r, ok := byTick[t.UnixMilli()]
		switch {
		case !ok && batontype.InPause(pauses, t):
			// Skipped on purpose: a paused tick.
		case !ok:
			p := Problem{Job: js.Spec.Name, Tick: t, Kind: "missed", Blocker: blocker(runs, t)}
			if i == 0 { // the latest due tick: also who holds the lease now
				if err := blame(ctx, led, in, js.Spec.Name, &p); err != nil {
					return nil, err
				}
			}
			out = append(out, p)
		case r.Outcome == batontype.OutcomeRunning:
			alive, err := stillHeld(ctx, in, js.Spec, r, now)
			if err != nil {
				return nil, err
			}
			if !alive {
				out = append(out, Problem{Job: js.Spec.Name, Tick: t, Kind: "unfinished", Run: &r})
			}
		case r.Outcome != batontype.OutcomeSucceeded:
			out = append(out, Problem{Job: js.Spec.Name, Tick: t, Kind: "failed", Run: &r})
		}
	}
	return out, nil
}

// blame names what kept p's tick from being claimed: the run that held
// the lease at the tick (Problem.Blocker), and the lease held now
// (Problem.Holder), which keeps the next ticks from being claimed; its
// GrantedAt tells whether it also held the missed one.
func blame(ctx context.Context, led lockprovider.Ledger, in lockprovider.Inspector, job string, p *Problem) error {
	if p.Blocker == nil { // it may have started before the runs read
		before, err := led.Runs(ctx, batontype.RunQuery{Job: job, Until: p.Tick, Limit: 1})
		if err != nil {
			return err
		}
		p.Blocker = blocker(before, p.Tick)
	}
	if in == nil {
		return nil
	}
	info, err := in.Inspect(ctx, job)
	if err != nil {
		return err
	}
	if info.Held {
		p.Holder = &Holder{LockedBy: info.LockedBy, Token: info.Token, GrantedAt: info.GrantedAt, Until: info.Until}
	}
	return nil
}

// blocker returns the newest of runs (newest first) that started before
// tick and had not ended by then: it held the lease when tick was due.
func blocker(runs []batontype.RunRecord, tick time.Time) *batontype.RunRecord {
	for _, r := range runs {
		if r.Started.Before(tick) {
			if r.Outcome == batontype.OutcomeRunning || r.Finished.After(tick) {
				return &r
			}
			return nil // the newest run before the tick had ended
		}
	}
	return nil
}

// stillHeld reads the job's lease through in (nil: no Inspector) for
// Unfinished, and reports whether the open run r may still be going.
func stillHeld(ctx context.Context, in lockprovider.Inspector, spec batontype.JobSpec, r batontype.RunRecord, now time.Time) (bool, error) {
	var lease *batontype.LeaseInfo
	if in != nil {
		info, err := in.Inspect(ctx, r.Job)
		if err != nil {
			return false, err
		}
		lease = &info
	}
	return !Unfinished(r, spec, lease, now), nil
}

// Unfinished reports whether run, which has not ended, never will: its
// process died, or lost the lease and did not record an end. lease is the
// job's lease read after the run (lockprovider.Inspector): the run is
// unfinished when the lease is no longer held with the run's token. With
// no lease to read (nil), it is when the run started more than the job's
// AtMostFor ago, unless the job renews its lease (auto_renew) or has no
// AtMostFor. A run that has ended (Outcome not OutcomeRunning) is not
// unfinished. Check, the baton CLI and the status page all decide it
// here.
func Unfinished(run batontype.RunRecord, spec batontype.JobSpec, lease *batontype.LeaseInfo, now time.Time) bool {
	switch {
	case run.Outcome != batontype.OutcomeRunning:
		return false
	case lease != nil:
		return !lease.Held || lease.Token != run.Token
	}
	return spec.AtMostFor > 0 && !slices.Contains(spec.Options, "auto_renew") && !now.Before(run.Started.Add(spec.AtMostFor))
}

// invalid reports a rejected argument of Check.
func invalid(field, value, reason string, sentinel error) *batontype.ValidationError {
	return &batontype.ValidationError{Field: field, Value: strconv.Quote(batontype.Shorten(value, maxEcho)), Reason: reason, Err: sentinel}
}

// maxEcho bounds echoed input in error texts, as in the scheduler.
const maxEcho = 64
