package schedulertest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/scheduler/jobstate"
)

// Every tick a replica does not run is counted in the registry by reason,
// on the deterministic clock: for each job, each tick is run by one
// replica and skipped by the other, for the reason that kept it from
// running (another replica held the lock, its own previous run was still
// going, the job was paused on it), with the holder named when
// InspectOnSkip reads it; the counts are published within one registry
// beat of the tick.
func TestSkipsPublished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		const ticks = 4
		jobs := map[string]time.Duration{ // the run's length
			"quick": 10 * time.Second, // the loser finds the lock held
			"slow":  90 * time.Second, // the next tick finds the winner's run still going
			"pause": time.Second,      // paused on a
		}
		var scheds []*scheduler.Scheduler
		for _, name := range []string{"a", "b"} {
			s := newSched(t, p, &scheduler.Config{LockedBy: name, InspectOnSkip: true, Ledger: true})
			for job, d := range jobs {
				j := must(s.Every(time.Minute).Locked(job, scheduler.AtMostFor(5*time.Minute)).Do(func(ctx context.Context, run scheduler.Run) error {
					time.Sleep(d) // the job's work, on the bubble's clock
					return nil
				}))
				if job == "pause" && name == "a" {
					j.Pause()
				}
			}
			scheds = append(scheds, s)
			start(t, s)
		}
		first := time.Now().Truncate(time.Minute).Add(time.Minute)
		// Past the last tick's skips and a registry beat (RegistryTTL/3,
		// 10 s) after them, before the next tick.
		time.Sleep(time.Until(first.Add((ticks-1)*time.Minute + 30*time.Second)))
		synctest.Wait()

		insts, err := p.Instances(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, j := range jobstate.ListAll(t.Context(), insts, nil, nil, time.Now()) {
			listed++
			runs, err := p.Runs(t.Context(), batontype.RunQuery{Job: j.Spec.Name})
			if err != nil {
				t.Fatal(err)
			}
			// Each replica ran each tick or skipped it.
			n, total := int64(len(runs)), j.SkipTotals()
			if n+total.Total() != 2*ticks {
				t.Errorf("%s: %d runs and %d skips (%+v), want %d in all", j.Spec.Name, n, total.Total(), j.Skips, 2*ticks)
			}
			for _, rs := range j.Skips {
				if rs.Last.Reason == "" || rs.Last.Tick.IsZero() {
					t.Errorf("%s on %s: latest skip %+v, want a reason and a tick", j.Spec.Name, rs.LockedBy, rs.Last)
				}
			}
			switch j.Spec.Name {
			case "quick":
				if n != ticks || total.Held != ticks {
					t.Errorf("quick: %d runs, skips %+v: want every tick run once and held on the other replica", n, total)
				}
				for _, rs := range j.Skips {
					if other := map[string]string{"a": "b", "b": "a"}[rs.LockedBy]; rs.Last.Holder != other {
						t.Errorf("quick on %s: latest skip held by %q, want %q", rs.LockedBy, rs.Last.Holder, other)
					}
				}
			case "slow":
				// Runs at the first and third tick; at the others the
				// runner's previous run is still going and the lock held,
				// and the other replica finds it held at every tick.
				if n != ticks/2 || total.StillRunning != ticks/2 || total.Held != ticks {
					t.Errorf("slow: %d runs, skips %+v: want %d runs, %d still running, %d held", n, total, ticks/2, ticks/2, ticks)
				}
			case "pause":
				if n != ticks || len(j.Skips) != 1 || j.Skips[0].LockedBy != "a" || j.Skips[0].Paused != ticks {
					t.Errorf("pause: %d runs, skips %+v: want %d runs, and %d paused on a only", n, j.Skips, ticks, ticks)
				}
			}
		}
		if listed != len(jobs) {
			t.Errorf("%d jobs listed, want %d", listed, len(jobs))
		}
		for _, s := range scheds {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
