package main

import (
	"slices"
	"testing"
	"time"

	"github.com/baton-go/baton/scheduler/jobstate"
)

// A past event (a run's start, a grant) stamped by a backend whose clock
// is a little ahead of this machine's reads "<1s ago", not "in 4s"; a
// future one (a lease's end) still reads "in …".
func TestPastTimesNeverAhead(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	c := &cli{now: now}
	for _, tc := range []struct {
		got, want string
	}{
		{c.ago(now.Add(4 * time.Second)), "<1s ago"},
		{c.ago(now.Add(-90 * time.Second)), "1m ago"},
		{c.moment(now.Add(4 * time.Second)), "in 4s"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// jobs check's per-job summary counts each kind and spans the ticks.
func TestSummarize(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	ps := []jobstate.Problem{
		{Job: "a", Tick: t0.Add(2 * time.Minute), Kind: "missed"},
		{Job: "b", Tick: t0, Kind: "failed"},
		{Job: "a", Tick: t0, Kind: "failed"},
		{Job: "a", Tick: t0.Add(time.Minute), Kind: "unfinished"},
	}
	got := summarize(ps)
	want := []problemSummary{
		{Job: "a", Missed: 1, Failed: 1, Unfinished: 1, First: t0, Last: t0.Add(2 * time.Minute)},
		{Job: "b", Failed: 1, First: t0, Last: t0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("summarize: %+v, want %+v", got, want)
	}
}
