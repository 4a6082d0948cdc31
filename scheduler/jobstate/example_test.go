package jobstate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// Check is the dead-man's switch: here the registry says an instance runs
// an hourly job, and the ledger has no run of its last due tick.
func ExampleCheck() {
	p, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 3, 30, 0, 0, time.UTC)
	_ = p.Register(ctx, batontype.Instance{
		LockedBy: "app-1",
		Started:  now.Add(-24 * time.Hour),
		Jobs:     []batontype.JobSpec{{Name: "hourly", Schedule: "0 * * * *", Locked: true, AtMostFor: time.Minute}},
	}, time.Minute)
	rep, err := jobstate.Check(ctx, p, jobstate.CheckOptions{Grace: 5 * time.Minute, Now: now})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, pr := range rep.Problems {
		fmt.Println(pr.Job, pr.Tick.Format(time.Kitchen), pr.Kind)
	}
	fmt.Println("ok:", rep.OK())
	// Output:
	// hourly 3:00AM missed
	// ok: false
}

// List is the jobs list an operator sees: here one instance registered an
// hourly job, which has not run yet.
func ExampleList() {
	p, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 3, 30, 0, 0, time.UTC)
	_ = p.Register(ctx, batontype.Instance{
		LockedBy: "app-1",
		Started:  now.Add(-time.Hour),
		Jobs:     []batontype.JobSpec{{Name: "hourly", Schedule: "0 * * * *", Locked: true, AtMostFor: time.Minute}},
	}, time.Minute)
	insts, err := p.Instances(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range jobstate.List(ctx, insts, p, now) {
		fmt.Println(j.Spec.Name, j.Replicas, "next", j.NextTick.Format(time.Kitchen), "ran", j.LastRun != nil)
	}
	// Output:
	// hourly [app-1] next 4:00AM ran false
}
