package observe_test

import (
	"context"
	"fmt"

	"github.com/baton-go/baton/observe"
)

// An Observer that counts what it is told; Join fans one event stream out
// to it and any other observers, such as the OpenTelemetry and Prometheus
// adapters.
func Example() {
	counts := map[observe.Kind]int{}
	count := observe.Func(func(_ context.Context, e observe.Event) { counts[e.Kind]++ })
	obs := observe.Join(count, nil) // nil observers are dropped

	ctx := context.Background()
	obs.Observe(ctx, observe.Event{Kind: observe.LockAcquired, Name: "daily-report", Token: 7, Outcome: observe.OutcomeGranted})
	obs.Observe(ctx, observe.Event{Kind: observe.LockReleased, Name: "daily-report", Token: 7, Outcome: observe.OutcomeOK})
	fmt.Println(counts[observe.LockAcquired], counts[observe.LockReleased], observe.LockAcquired)
	// Output: 1 1 lock.acquired
}
