package scheduler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/observe"
)

// Pause and resume: on this instance (Job.Pause) and cluster-wide
// through the provider's control state, and the admission of ticks.

// ErrPaused is the reason a tick is skipped while its job is paused, on
// this instance (Job.Pause) or cluster-wide (Scheduler.Pause,
// baton jobs pause).
var ErrPaused = errors.New("scheduler: job paused")

// ErrControlNotSupported is returned (inside a *ValidationError) by
// Scheduler.Pause and Scheduler.Resume when the provider does not implement
// lockprovider.Control, or Config.DisableControl is set.
var ErrControlNotSupported = fmt.Errorf("%w: provider has no cluster-wide control (no lockprovider.Control)", ErrInvalid)

// Pause stops this instance (this replica only) from running the job's
// scheduled ticks (and catch-up) until Job.Resume; they are skipped with
// ErrPaused. A run in progress is not interrupted, and manual runs still
// run. Other replicas are not affected: Scheduler.Pause pauses a job on
// every replica. The job registry shows the pause (the option "paused" of
// this instance's entry), so operators see it.
func (j *Job) Pause() {
	if !j.ctl.paused.Swap(true) {
		j.s.jobsChanged()
	}
}

// Resume undoes Job.Pause on this instance; a cluster-wide pause
// (Scheduler.Pause) stays.
func (j *Job) Resume() {
	if j.ctl.paused.Swap(false) {
		j.s.jobsChanged()
	}
}

// Paused reports whether the job is paused on this instance or, as last
// read from the provider, cluster-wide.
func (j *Job) Paused() bool { return j.ctl.paused.Load() || j.s.clusterPaused(j.name) }

// admit decides whether a tick of j goes on to its claim: not for a job
// removed meanwhile, nor for a paused one (reported as a skip). A
// scheduled tick of a job with Jitter waits for its delay first.
func (s *Scheduler) admit(j *Job, ev *Event) bool {
	if j.ctl.removed.Load() {
		return false
	}
	if d := j.ctl.jitter; d > 0 && !ev.CatchUp {
		wait := ev.Tick.Add(JitterOf(j.name, ev.Tick, d)).Sub(s.now())
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.stop:
				t.Stop()
				return false
			}
		}
		if j.ctl.removed.Load() {
			return false
		}
	}
	if !j.Paused() {
		return true
	}
	ev.Err, ev.Outcome = ErrPaused, observe.OutcomePaused
	s.skipped(j, ev.Tick, batontype.SkipPaused, "")
	s.cfg.Logger.DebugContext(s.runCtx, "scheduler: skipped tick: job paused", "job", j.name, "tick", ev.Tick,
		"here", j.ctl.paused.Load(), "cluster", s.clusterPaused(j.name))
	s.emit(s.runCtx, observe.JobSkipped, ev)
	return false
}

// clusterPaused reports whether name was paused cluster-wide at the last
// read of the control state.
func (s *Scheduler) clusterPaused(name string) bool {
	m := s.control.paused.Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[name]
	return ok
}

// Pause pauses the job named name cluster-wide: on every replica that
// follows the provider's control state (see Config.ControlPoll), its
// ticks are skipped with ErrPaused until Scheduler.Resume. The name need
// not be registered on this instance. Job.Pause pauses on this instance
// only. It needs a provider implementing lockprovider.Control
// (else ErrControlNotSupported).
func (s *Scheduler) Pause(ctx context.Context, name string) error {
	return s.setPaused(ctx, name, true)
}

// Resume undoes a cluster-wide pause (Scheduler.Pause, or baton jobs
// pause) on every replica; a pause of this instance (Job.Pause) stays.
func (s *Scheduler) Resume(ctx context.Context, name string) error {
	return s.setPaused(ctx, name, false)
}

func (s *Scheduler) setPaused(ctx context.Context, name string, paused bool) error {
	if ctx == nil {
		return ErrNilContext
	}
	ctl := s.controlProvider()
	if ctl == nil {
		field := "Pause"
		if !paused {
			field = "Resume"
		}
		return invalid(name, field, "", "needs a provider implementing lockprovider.Control and Config.DisableControl unset", ErrControlNotSupported, nil)
	}
	if err := ctl.SetPaused(ctx, name, paused); err != nil {
		return withJob(name, err)
	}
	// Take effect here at once rather than at the announcement.
	for {
		old := s.control.paused.Load()
		m := map[string]struct{}{}
		if old != nil {
			m = maps.Clone(*old)
		}
		if paused {
			m[name] = struct{}{}
		} else {
			delete(m, name)
		}
		if s.control.paused.CompareAndSwap(old, &m) {
			return nil
		}
	}
}
