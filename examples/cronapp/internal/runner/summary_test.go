package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/examples/cronapp/internal/wire"
)

func TestExpectedTicks(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	j := wire.Job{Name: "j", Every: 2 * time.Second, Offset: 500 * time.Millisecond}
	got := expectedTicks(j, base.Add(600*time.Millisecond), base.Add(6500*time.Millisecond))
	want := []time.Time{base.Add(2500 * time.Millisecond), base.Add(4500 * time.Millisecond), base.Add(6500 * time.Millisecond)}
	if len(got) != len(want) {
		t.Fatalf("ticks %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("tick %d: %v, want %v", i, got[i], want[i])
		}
	}
	// A window starting exactly on a tick includes it.
	if got := expectedTicks(j, base.Add(500*time.Millisecond), base.Add(500*time.Millisecond)); len(got) != 1 {
		t.Errorf("window on a tick: %v", got)
	}
}

func TestTally(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	c := newCollector(2)
	c.add("r1", wire.Record{Msg: wire.MsgReady, Time: base, Jobs: []wire.Job{
		{Name: "daily-report", Every: 2 * time.Second, Locked: true},
		{Name: "inventory", Every: 2 * time.Second, Offset: time.Second, Locked: true},
	}})
	c.add("r2", wire.Record{Msg: wire.MsgReady, Time: base.Add(10 * time.Millisecond)})
	ev := func(rep, job string, tick time.Duration, outcome string, token int64) {
		c.add(rep, wire.Record{Msg: wire.MsgEvent, Job: job, Tick: base.Add(tick), Outcome: outcome, Token: token})
	}
	run := func(rep, job string, tick time.Duration, outcome string, token int64) {
		ev(rep, job, tick, wire.Started, token)
		ev(rep, job, tick, outcome, token)
	}
	run("r1", "daily-report", 2*time.Second, wire.Ran, 1)
	ev("r2", "daily-report", 2*time.Second, wire.Skipped, 0)
	run("r2", "daily-report", 4*time.Second, wire.Ran, 2)
	run("r1", "inventory", 1*time.Second, wire.Ran, 10)
	run("r2", "inventory", 3*time.Second, wire.Paused, 11)
	run("r1", "inventory", 5*time.Second, wire.Ran, 12)
	ev("r2", "inventory", 3*time.Second, wire.Rejected, 11)
	c.add("r1", wire.Record{Msg: wire.MsgEvent, Job: "customer-sync", Tick: base, Outcome: wire.Batch, Synced: 3, Held: 2, Limited: 1})

	witness := map[string]map[time.Time]int{
		"daily-report": {base.Add(2 * time.Second): 1, base.Add(4 * time.Second): 1},
		"inventory":    {base.Add(time.Second): 1, base.Add(3 * time.Second): 1, base.Add(5 * time.Second): 1},
	}
	s := tally(c, base.Add(100*time.Millisecond), base.Add(5500*time.Millisecond), witness, 998, 12, true)
	if len(s.Failures) > 0 {
		t.Fatalf("failures: %q", s.Failures)
	}
	if s.Rejected != 1 || s.RateLimit != 1 || s.Synced != 3 || s.Applied != 2 || !strings.Contains(s.Frozen, "r2") {
		t.Errorf("summary %+v", s)
	}
	for _, ch := range s.Checks {
		if ch.Once != ch.Expected || ch.Expected < 2 {
			t.Errorf("check %+v", ch)
		}
	}

	// A missing tick, a second run and a stale write that landed fail.
	delete(witness["daily-report"], base.Add(4*time.Second))
	run("r1", "daily-report", 2*time.Second, wire.Duplicate, 3)
	s = tally(c, base.Add(100*time.Millisecond), base.Add(5500*time.Millisecond), witness, 997, 12, true)
	got := strings.Join(s.Failures, "\n")
	for _, want := range []string{"1 of 2 ticks in the window did not run", "ran a second time", "1 of 2 ticks started by exactly one replica", "stock is 997"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures %q lack %q", got, want)
		}
	}
}

// A tick that every replica reported missed (the machine stood still) is
// not a failure; one that only some replicas missed is.
func TestTallyStalledTicks(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	job := wire.Job{Name: "daily-report", Every: time.Second, Locked: true}
	build := func(everyone bool) *Summary {
		c := newCollector(2)
		c.add("r1", wire.Record{Msg: wire.MsgReady, Time: base, Jobs: []wire.Job{job}})
		c.add("r2", wire.Record{Msg: wire.MsgReady, Time: base})
		witness := map[string]map[time.Time]int{"daily-report": {}}
		for _, tick := range []time.Duration{1, 4} {
			tk := base.Add(tick * time.Second)
			c.add("r1", wire.Record{Msg: wire.MsgEvent, Job: job.Name, Tick: tk, Outcome: wire.Started, Token: int64(tick)})
			witness["daily-report"][tk] = 1
		}
		missed := func(rep string) {
			c.add(rep, wire.Record{Msg: wire.MsgEvent, Job: job.Name, Tick: base.Add(2 * time.Second), Last: base.Add(3 * time.Second), Outcome: wire.Missed})
		}
		missed("r1")
		if everyone {
			missed("r2")
		}
		return tally(c, base.Add(500*time.Millisecond), base.Add(4500*time.Millisecond), witness, stockStart, 0, false)
	}
	s := build(true)
	if len(s.Failures) > 0 || len(s.Checks) != 1 || len(s.Checks[0].Stalled) != 2 {
		t.Errorf("every replica missed ticks 2-3: failures %q, checks %+v; want 2 stalled ticks and no failure", s.Failures, s.Checks)
	}
	var out strings.Builder
	s.Print(&out)
	if !strings.Contains(out.String(), "2 ticks passed while every replica stood still") {
		t.Errorf("summary does not report the stalled ticks:\n%s", out.String())
	}
	s = build(false)
	if len(s.Checks) != 1 || len(s.Checks[0].Missing) != 2 || len(s.Failures) == 0 {
		t.Errorf("only r1 missed ticks 2-3: checks %+v, failures %q; want 2 missing ticks and a failure", s.Checks, s.Failures)
	}
}
