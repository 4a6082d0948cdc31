package schedulertest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// Job.Pause shows in the registry: jobstate lists the replicas that
// paused the job, and Check reports a job paused on every live replica as
// paused, not as missed ticks. A job paused on some replicas only still
// runs on the others and is checked.
func TestLocalPauseInRegistry(t *testing.T) {
	t.Parallel()
	p := newMemory(t, nil)
	var jobs []*scheduler.Job
	for i := range 2 {
		s := newSched(t, p, &scheduler.Config{LockedBy: fmt.Sprintf("replica-%d", i), RegistryTTL: time.Second})
		j, err := s.Every(time.Hour).Locked("hourly", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	// registered waits until the registry shows want as PausedOn.
	registered := func(want ...string) jobstate.RegisteredJob {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			insts, err := p.Instances(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			rjs := jobstate.Jobs(insts)
			if len(rjs) == 1 && len(rjs[0].Replicas) == 2 && slices.Equal(rjs[0].PausedOn, want) {
				return rjs[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("registry: %+v; want PausedOn %v", rjs, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	check := func() jobstate.CheckReport {
		t.Helper()
		// An hour and a half from now, a tick is due that nobody ran.
		rep, err := jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: time.Now().Add(90 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rj := registered(); rj.PausedEverywhere() {
		t.Error("PausedEverywhere with no pause")
	}
	jobs[0].Pause()
	rj := registered("replica-0")
	if rj.PausedEverywhere() || slices.Contains(rj.Spec.Options, "paused") {
		t.Errorf("paused on one replica of two: %+v", rj)
	}
	if rep := check(); len(rep.Paused) != 0 || len(rep.Problems) != 1 || rep.Problems[0].Kind != "missed" {
		t.Errorf("Check with one replica of two paused: %+v; want the job checked (missed)", rep)
	}
	jobs[1].Pause()
	if rj := registered("replica-0", "replica-1"); !rj.PausedEverywhere() {
		t.Errorf("paused on both replicas: %+v", rj)
	}
	if rep := check(); !slices.Equal(rep.Paused, []string{"hourly"}) || len(rep.Problems) != 0 || !rep.OK() {
		t.Errorf("Check with every replica paused: %+v; want the job paused, no problem", rep)
	}
	jobs[0].Resume()
	jobs[1].Resume()
	registered()
}

// A missed tick of a job whose lease is held names the holder: a run
// still going past its next tick keeps the tick from being claimed.
func TestCheckNamesHolder(t *testing.T) {
	t.Parallel()
	p := newMemory(t, nil)
	now := time.Now()
	inst := batontype.Instance{LockedBy: "a", Started: now.Add(-48 * time.Hour), Jobs: []batontype.JobSpec{
		{Name: "hourly", Schedule: "@every 1h0m0s", Locked: true, AtMostFor: 3 * time.Hour},
	}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
	rep, err := jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: now})
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Holder != nil {
		t.Fatalf("Check with the lease free: %+v, %v; want one missed tick without a holder", rep.Problems, err)
	}
	l, err := p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "hourly", Owner: lockprovider.NewOwner(), LockedBy: "stuck-1", AtMostFor: 3 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = jobstate.Check(t.Context(), p, jobstate.CheckOptions{Now: now, Since: now.Add(-3 * time.Hour)})
	if err != nil || len(rep.Problems) < 2 {
		t.Fatalf("Check --since 3h: %+v, %v", rep.Problems, err)
	}
	for i, pr := range rep.Problems {
		latest := i == len(rep.Problems)-1
		if latest != (pr.Holder != nil) {
			t.Errorf("problem %d of %d: holder %+v; want the holder on the latest tick only", i, len(rep.Problems), pr.Holder)
		}
		if latest && (pr.Holder.LockedBy != "stuck-1" || pr.Holder.Token != l.Token) {
			t.Errorf("holder %+v, want stuck-1 with token %d", pr.Holder, l.Token)
		}
	}
}
