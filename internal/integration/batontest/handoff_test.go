package batontest

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider"
)

type hold struct{ start, end time.Time }

// testHandoff runs 50 goroutines that Acquire one name and hold it 1-5 ms
// each. Every one must finish, no two holds may overlap, and the median
// hand-off (one holder's last moment to the next holder's first) is logged.
func testHandoff(t *testing.T, p lockprovider.Provider, notify bool) {
	const workers = 50
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := newLocker(t, p, &baton.Config{DisableNotify: !notify})
	name := "handoff-" + time.Now().Format("150405.000000")

	var (
		mu    sync.Mutex
		holds []hold
		wg    sync.WaitGroup
	)
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			lock, err := l.Acquire(ctx, name, &baton.AcquireOptions{AtMostFor: 10 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			// Recorded inside the held window: after the grant came
			// back, before the release is sent.
			start := time.Now()
			time.Sleep(time.Millisecond + rand.N(4*time.Millisecond))
			end := time.Now()
			mu.Lock()
			holds = append(holds, hold{start, end})
			mu.Unlock()
			if err := lock.Release(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(holds) != workers {
		t.Fatalf("%d of %d workers held the lock", len(holds), workers)
	}
	slices.SortFunc(holds, func(a, b hold) int { return a.start.Compare(b.start) })
	gaps := make([]time.Duration, 0, workers-1)
	for i := 1; i < len(holds); i++ {
		if holds[i].start.Before(holds[i-1].end) {
			t.Errorf("holds overlap: [%v, %v] and [%v, %v]", holds[i-1].start, holds[i-1].end, holds[i].start, holds[i].end)
		}
		gaps = append(gaps, holds[i].start.Sub(holds[i-1].end))
	}
	slices.Sort(gaps)
	t.Logf("%s (notify=%v): %d hand-offs in %v, median %v, p90 %v, max %v", t.Name(), notify, len(gaps),
		holds[len(holds)-1].end.Sub(holds[0].start).Round(time.Millisecond),
		gaps[len(gaps)/2], gaps[len(gaps)*9/10], gaps[len(gaps)-1])
}

func TestHandoffMemory(t *testing.T) {
	t.Parallel()
	for _, notify := range []bool{true, false} {
		t.Run(map[bool]string{true: "notify", false: "poll"}[notify], func(t *testing.T) {
			testHandoff(t, newMemory(t, nil), notify)
		})
	}
}
