package scheduler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Every tick fires on time however long the loop's work for the previous
// tick took: the loop measures its next wait after dispatching, not from
// the time it woke. The dispatch of each tick is made to take 40 ms (1 ms
// per job) of the bubble's clock; a loop that computed its wait before
// dispatching started every tick after the first 40 ms late.
func TestTicksOnTimeAfterSlowDispatch(t *testing.T) {
	for _, locked := range []bool{false, true} {
		t.Run(fmt.Sprintf("locked=%v", locked), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := New(newMemory(t, nil), &Config{DisableRegistry: true, AtMostFor: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				s.afterDispatch = func(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }
				var mu sync.Mutex
				late := map[time.Time]time.Duration{} // per tick, the latest start
				const jobs = 40
				for i := range jobs {
					b := s.Every(time.Second)
					if locked {
						b = b.Locked(fmt.Sprintf("on-time-%d", i))
					} else {
						b = b.Name(fmt.Sprintf("on-time-%d", i))
					}
					if _, err := b.Do(func(_ context.Context, run Run) error {
						mu.Lock()
						defer mu.Unlock()
						late[run.Tick] = max(late[run.Tick], time.Since(run.Tick))
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5*time.Second + time.Second/2)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(late) != 5 {
					t.Errorf("%d ticks ran, want 5: %v", len(late), late)
				}
				for tick, d := range late {
					if d != 0 {
						t.Errorf("tick %s started %v late", tick.Format(time.TimeOnly), d)
					}
				}
			})
		})
	}
}
