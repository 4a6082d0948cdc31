package jobstate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// One decision for the page, jobs ls and jobs check: the latest run
// decides at once, a newer problem (missed, after Check's grace) over it,
// and an open run whose lease ended is unfinished, never running.
func TestState(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	tick := now.Add(-2 * time.Minute)
	spec := batontype.JobSpec{Name: "report", Schedule: "@every 1m", Locked: true, AtMostFor: time.Minute}
	run := func(o batontype.Outcome, at time.Time) *batontype.RunRecord {
		r := batontype.RunRecord{Job: "report", Token: 7, LockedBy: "r2", Tick: at, Started: at, Outcome: o}
		if o != batontype.OutcomeRunning {
			r.Finished = at.Add(time.Second)
		}
		return &r
	}
	job := func(last *batontype.RunRecord) jobstate.Job {
		return jobstate.Job{RegisteredJob: jobstate.RegisteredJob{Spec: spec, Replicas: []string{"r1", "r2"}}, LastRun: last}
	}
	held := &batontype.LeaseInfo{Held: true, Token: 7, LockedBy: "r2"}
	taken := &batontype.LeaseInfo{Held: true, Token: 8, LockedBy: "r1"}
	free := &batontype.LeaseInfo{}
	missedLater := &jobstate.Problem{Job: "report", Tick: tick.Add(time.Minute), Kind: jobstate.StateMissed}
	failedSame := &jobstate.Problem{Job: "report", Tick: tick, Kind: jobstate.StateFailed}
	cases := []struct {
		name    string
		j       jobstate.Job
		paused  bool
		problem *jobstate.Problem
		lease   *batontype.LeaseInfo
		want    string
	}{
		{"never run", job(nil), false, nil, nil, jobstate.StateOK},
		{"succeeded", job(run(batontype.OutcomeSucceeded, tick)), false, nil, nil, jobstate.StateOK},
		{"failed, before any grace", job(run(batontype.OutcomeFailed, tick)), false, nil, nil, jobstate.StateFailed},
		{"lock lost", job(run(batontype.OutcomeLockLost, tick)), false, nil, nil, jobstate.StateFailed},
		{"failed, then a later success", job(run(batontype.OutcomeSucceeded, tick)), false, nil, nil, jobstate.StateOK},
		{"the problem of the latest run's own tick", job(run(batontype.OutcomeFailed, tick)), false, failedSame, nil, jobstate.StateFailed},
		{"a missed tick after the latest run", job(run(batontype.OutcomeSucceeded, tick)), false, missedLater, nil, jobstate.StateMissed},
		{"running under its lease", job(run(batontype.OutcomeRunning, tick)), false, nil, held, jobstate.StateRunning},
		{"its lease ended: the replica died", job(run(batontype.OutcomeRunning, tick)), false, nil, free, jobstate.StateUnfinished},
		{"its lease taken by another", job(run(batontype.OutcomeRunning, tick)), false, nil, taken, jobstate.StateUnfinished},
		{"no lease to read, past AtMostFor", job(run(batontype.OutcomeRunning, tick)), false, nil, nil, jobstate.StateUnfinished},
		{"no lease to read, inside AtMostFor", job(run(batontype.OutcomeRunning, now.Add(-time.Second))), false, nil, nil, jobstate.StateRunning},
		{"paused cluster-wide over a failure", job(run(batontype.OutcomeFailed, tick)), true, nil, nil, jobstate.StatePaused},
		{"paused on every replica", func() jobstate.Job { j := job(nil); j.PausedOn = j.Replicas; return j }(), false, nil, nil, jobstate.StatePaused},
	}
	for _, c := range cases {
		if got := jobstate.State(c.j, c.paused, c.problem, c.lease, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	unlocked := jobstate.Job{RegisteredJob: jobstate.RegisteredJob{Spec: batontype.JobSpec{Name: "warm", Schedule: "@every 1m"},
		LastRuns: []batontype.RunRecord{*run(batontype.OutcomeSucceeded, tick), *run(batontype.OutcomePanicked, tick)}}}
	if got := jobstate.State(unlocked, false, nil, nil, now); got != jobstate.StateFailed {
		t.Errorf("unlocked, panicked on one replica: %q, want failed", got)
	}
	unlocked.LastRuns = unlocked.LastRuns[:1]
	if got := jobstate.State(unlocked, false, nil, nil, now); got != jobstate.StateUnlocked {
		t.Errorf("unlocked: %q, want unlocked", got)
	}
}

// A tick missed behind a run of an earlier tick that never ended names
// that run (Problem.Blocker), whether its replica still holds the lease
// or died; a lease granted after the tick is not taken for the blocker.
func TestCheckNamesBlocker(t *testing.T) {
	clock := time.Date(2026, 12, 7, 1, 0, 5, 0, time.UTC)
	p, err := memory.New(&memory.Config{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	job := batontype.JobSpec{Name: "hourly", Schedule: "0 * * * *", Locked: true, AtMostFor: 3 * time.Hour}
	inst := batontype.Instance{LockedBy: "r2", Started: clock.Add(-24 * time.Hour), Jobs: []batontype.JobSpec{job}}
	owner := lockprovider.NewOwner()
	l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: "hourly", Owner: owner, LockedBy: "r2", AtMostFor: 3 * time.Hour,
		Tick: time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)}, lockprovider.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	clock = time.Date(2026, 12, 7, 2, 30, 0, 0, time.UTC)
	if err := p.Register(ctx, inst, time.Hour); err != nil {
		t.Fatal(err)
	}
	check := func() jobstate.Problem {
		t.Helper()
		rep, err := jobstate.Check(ctx, p, jobstate.CheckOptions{Grace: 5 * time.Minute, Now: clock})
		if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != jobstate.StateMissed {
			t.Fatalf("check: %v %+v; want the 2:00 tick missed", err, rep.Problems)
		}
		return rep.Problems[0]
	}
	if pr := check(); pr.Blocker == nil || pr.Blocker.Token != l.Token || pr.Holder == nil || pr.Holder.Token != l.Token {
		t.Errorf("missed behind a run still going: blocker %+v, holder %+v; want token %d for both", pr.Blocker, pr.Holder, l.Token)
	}
	// The replica dies: its lease ends, its run never does; another
	// takes the lease after the tick.
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "hourly", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	later, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "hourly", Owner: lockprovider.NewOwner(), LockedBy: "r1", AtMostFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	pr := check()
	if pr.Blocker == nil || pr.Blocker.Token != l.Token || !jobstate.Unfinished(*pr.Blocker, job, &batontype.LeaseInfo{Held: true, Token: later.Token}, clock) {
		t.Errorf("missed behind a dead run: blocker %+v; want the unfinished run of token %d", pr.Blocker, l.Token)
	}
	if pr.Holder == nil || !pr.Holder.GrantedAt.After(pr.Tick) {
		t.Errorf("holder %+v: want r1's lease, granted after the tick", pr.Holder)
	}
}

// A replica is alive, late (a renewal missed), gone (lapsed without a
// shutdown) or left (deregistered).
func TestReplicas(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	inst := func(name string, seen time.Duration) batontype.Instance {
		hb := now.Add(-seen)
		return batontype.Instance{LockedBy: name, Heartbeat: hb, Until: hb.Add(30 * time.Second)}
	}
	rs := jobstate.Replicas([]batontype.Instance{inst("r3", 20*time.Second), inst("r1", 5*time.Second)},
		[]batontype.Departed{{Instance: inst("r2", 40*time.Second)}, {Instance: inst("r0", time.Minute), Left: true}}, now)
	var got []string
	for _, r := range rs {
		got = append(got, r.LockedBy+":"+r.State)
	}
	if want := []string{"r0:left", "r1:alive", "r2:gone", "r3:late"}; !slices.Equal(got, want) {
		t.Errorf("Replicas = %v, want %v", got, want)
	}
}
