package scheduler_test

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
)

// Check is the dead-man's switch: here the registry says an instance runs
// an hourly job, and the ledger has no run of its last due tick.
func ExampleCheck() {
	p := memory.New(nil)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 3, 30, 0, 0, time.UTC)
	_ = p.Register(ctx, batontype.Instance{
		LockedBy: "app-1",
		Started:  now.Add(-24 * time.Hour),
		Jobs:     []batontype.JobSpec{{Name: "hourly", Schedule: "0 * * * *", Locked: true, AtMostFor: time.Minute}},
	}, time.Minute)
	rep, err := scheduler.Check(ctx, p, scheduler.CheckOptions{Grace: 5 * time.Minute, Now: now})
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
