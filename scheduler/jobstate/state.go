package jobstate

import (
	"time"

	"github.com/baton-go/baton/batontype"
)

// The states of a job, as the status page, `baton jobs ls` and `baton jobs
// check` give them: all three take them from State.
const (
	StateUnknown    = "unknown"    // the backend could not be read
	StateMissed     = "missed"     // no replica claimed its latest due tick
	StateFailed     = "failed"     // its latest run ended other than succeeded
	StateUnfinished = "unfinished" // its latest run never ended although its lease did: the process died
	StatePaused     = "paused"     // cluster-wide, or on every live replica
	StateRunning    = "running"    // its latest run is still going under its lease
	StateOK         = "ok"
	StateUnlocked   = "unlocked" // runs on every replica; the ledger records nothing of it
)

// State returns j's state. pausedCluster tells a job paused cluster-wide
// (batontype.ControlState.IsPaused). latest is the newest Problem that
// Check found for the job (nil for none): it decides only when its tick
// is newer than the latest run's, so the state follows the latest run at
// once and the grace of Check delays only "missed". lease is the job's
// lease read after the ledger (lockprovider.Inspector; nil for none), by
// which an open run is told from a dead one (Unfinished) the moment the
// lease ends.
func State(j Job, pausedCluster bool, latest *Problem, lease *batontype.LeaseInfo, now time.Time) string {
	switch {
	case pausedCluster || j.PausedEverywhere():
		return StatePaused
	case !j.Spec.Locked:
		for _, r := range j.LastRuns {
			if r.Outcome != batontype.OutcomeSucceeded && r.Outcome != batontype.OutcomeRunning {
				return StateFailed // on some replica
			}
		}
		return StateUnlocked
	}
	last := j.LastRun
	if latest != nil && (last == nil || latest.Tick.After(runTime(*last))) {
		return latest.Kind
	}
	switch {
	case last == nil || last.Outcome == batontype.OutcomeSucceeded:
		return StateOK
	case Unfinished(*last, j.Spec, lease, now):
		return StateUnfinished
	case last.Outcome == batontype.OutcomeRunning:
		return StateRunning
	}
	return StateFailed
}

// runTime is the tick a run claimed, or its start for a manual run.
func runTime(r batontype.RunRecord) time.Time {
	if r.Tick.IsZero() {
		return r.Started
	}
	return r.Tick
}
