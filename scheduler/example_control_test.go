package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/scheduler"
)

// A manual run: the job runs now, holding its lock but no tick.
func ExampleScheduler_RunNow() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	sched, err := scheduler.New(provider, nil)
	if err != nil {
		panic(err)
	}
	done := make(chan scheduler.Run, 1)
	_, err = sched.Every(time.Hour).
		Locked("rebuild-index", scheduler.AtMostFor(time.Minute)).
		Do(func(ctx context.Context, run scheduler.Run) error {
			done <- run
			return nil
		})
	if err != nil {
		panic(err)
	}
	if err := sched.RunNow(context.Background(), "rebuild-index"); err != nil {
		panic(err)
	}
	run := <-done
	fmt.Printf("manual %v, tick zero %v, token %d\n", run.Manual, run.Tick.IsZero(), run.Token)
	err = sched.RunNow(context.Background(), "no-such-job")
	fmt.Println(errors.Is(err, scheduler.ErrUnknownJob))
	_ = sched.Close()
	// Output:
	// manual true, tick zero true, token 1
	// true
}

// Retries within the same run: the same token, attempts 1, 2, 3.
func ExampleBuilder_Retry() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	sched, err := scheduler.New(provider, &scheduler.Config{
		Observer: scheduler.Hooks{Failed: func(ev scheduler.Event) {
			fmt.Printf("attempt %d failed: %v\n", ev.Attempt, ev.Err)
		}},
	})
	if err != nil {
		panic(err)
	}
	_, err = sched.Every(time.Hour).
		Locked("flaky", scheduler.AtMostFor(time.Minute)).
		Retry(2, 10*time.Millisecond).
		Do(func(ctx context.Context, run scheduler.Run) error {
			if run.Attempt < 3 {
				return errors.New("upstream busy")
			}
			fmt.Printf("attempt %d succeeded with token %d\n", run.Attempt, run.Token)
			return nil
		})
	if err != nil {
		panic(err)
	}
	if err := sched.RunNow(context.Background(), "flaky"); err != nil {
		panic(err)
	}
	_ = sched.Shutdown(context.Background()) // waits for the retries
	// Output:
	// attempt 1 failed: upstream busy
	// attempt 2 failed: upstream busy
	// attempt 3 succeeded with token 1
}

// The same (job, tick) gets the same delay on every replica.
func ExampleJitterOf() {
	tick := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	a := scheduler.JitterOf("report", tick, time.Minute)
	b := scheduler.JitterOf("report", tick, time.Minute)
	fmt.Println(a == b, a >= 0 && a < time.Minute)
	// Output: true true
}
