package main

import (
	"testing"
	"time"
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
