package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
)

// Two replicas share a lock store; each tick of the locked job runs on one
// of them only.
func Example() {
	provider, err := memory.New(nil) // in production: a Redis or PostgreSQL provider
	if err != nil {
		panic(err)
	}
	runs := make(chan scheduler.Run, 16)

	var replicas []*scheduler.Scheduler
	for range 2 {
		sched, err := scheduler.New(provider, nil)
		if err != nil {
			panic(err)
		}
		_, err = sched.Every(20*time.Millisecond).
			Locked("report", scheduler.AtMostFor(time.Second)).
			Do(func(ctx context.Context, run scheduler.Run) error {
				runs <- run
				return nil
			})
		if err != nil {
			panic(err)
		}
		if err := sched.Start(); err != nil {
			panic(err)
		}
		replicas = append(replicas, sched)
	}

	seen := map[time.Time]bool{}
	var last int64
	for range 3 {
		run := <-runs
		fmt.Printf("%s: new tick %v, aligned %v, newer token %v\n",
			run.Job, !seen[run.Tick], run.Tick.UnixNano()%int64(20*time.Millisecond) == 0, run.Token > last)
		seen[run.Tick], last = true, run.Token
	}
	for _, sched := range replicas {
		_ = sched.Shutdown(context.Background())
	}
	// Output:
	// report: new tick true, aligned true, newer token true
	// report: new tick true, aligned true, newer token true
	// report: new tick true, aligned true, newer token true
}

// Every ticks on multiples of the period since the Unix epoch, shifted by
// an Offset: the same instants on every replica.
func ExampleScheduler_Every() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	sched, err := scheduler.New(provider, nil)
	if err != nil {
		panic(err)
	}
	defer sched.Close()
	job, err := sched.Every(time.Hour, scheduler.Offset(15*time.Minute)).
		Locked("hourly-sync", scheduler.AtMostFor(50*time.Minute), scheduler.AtLeastFor(time.Minute)).
		Do(func(ctx context.Context, run scheduler.Run) error { return nil })
	if err != nil {
		panic(err)
	}
	if err := sched.Start(); err != nil {
		panic(err)
	}
	fmt.Println("next run at minute:second", job.Next().Format("04:05"))
	// Output:
	// next run at minute:second 15:00
}

// An invalid cron spec is reported with the field and value at fault.
func ExampleSpecError() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	sched, err := scheduler.New(provider, nil)
	if err != nil {
		panic(err)
	}
	defer sched.Close()
	_, err = sched.Cron("0 25 * * *").
		Locked("nightly", scheduler.AtMostFor(time.Hour)).
		Do(func(ctx context.Context, run scheduler.Run) error { return nil })
	var se *scheduler.SpecError
	if errors.As(err, &se) {
		fmt.Println(se.Field, se.Position, se.Value)
	}
	fmt.Println(errors.Is(err, scheduler.ErrInvalidSpec))
	fmt.Println(err)
	// Output:
	// hour 2 25
	// true
	// scheduler: cron spec "0 25 * * *": field 2 (hour) "25" is invalid: end of range (25) above maximum (23): 25
}

// A job that may outlive its lease keeps it alive, and learns through its
// context when the lease is lost anyway.
func ExampleAutoRenew() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	sched, err := scheduler.New(provider, &scheduler.Config{AtMostFor: time.Minute})
	if err != nil {
		panic(err)
	}
	defer sched.Close()
	_, err = sched.Cron("@daily").
		Locked("compaction", scheduler.AutoRenew()).
		Do(func(ctx context.Context, run scheduler.Run) error {
			// ... long work, checking ctx ...
			if errors.Is(context.Cause(ctx), scheduler.ErrLockLost) {
				return fmt.Errorf("stopped: another replica may hold the lock: %w", context.Cause(ctx))
			}
			return nil
		})
	fmt.Println(err)
	// Output:
	// <nil>
}
