package shedlock

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv/pgenv"
)

// Across the end of DST in New York (2026-11-01, 02:00 EDT -> 01:00 EST),
// a lock written in wall-clock time must never look free, to a JVM
// comparing wall-clock times, before the instant it really ends; and Go's
// reading of a stored wall time must never be earlier than that instant.
func TestWallClockAcrossDSTFallBack(t *testing.T) {
	pg := pgenv.Schema(t)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	rep := representation{wallZone: ny.String()}
	ctx := context.Background()
	q := "SELECT " + rep.until("$1::timestamptz", "$2::interval") + ", " + rep.inst(rep.until("$1::timestamptz", "$2::interval"))
	for _, c := range []struct {
		base string
		dur  time.Duration
	}{
		{"2026-11-01T05:50:00Z", 20 * time.Minute}, // 01:50 EDT until 01:10 EST
		{"2026-11-01T05:30:00Z", 2 * time.Hour},    // 01:30 EDT until 02:30 EST
		{"2026-11-01T06:10:00Z", 10 * time.Minute}, // inside the repeated hour
		{"2026-03-08T06:50:00Z", 20 * time.Minute}, // 01:50 EST until 03:10 EDT
		{"2026-07-01T12:00:00Z", time.Minute},      // no transition
	} {
		base, _ := time.Parse(time.RFC3339, c.base)
		end := base.Add(c.dur)
		var stored, read time.Time
		if err := pg.Pool.QueryRow(ctx, q, base, c.dur).Scan(&stored, &read); err != nil {
			t.Fatal(err)
		}
		// stored is a wall time (timestamp without zone, scanned as UTC).
		wall := func(x time.Time) time.Time {
			w := x.In(ny)
			return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
		}
		for x := base; x.Before(end); x = x.Add(time.Minute) {
			if !wall(x).Before(stored) {
				t.Errorf("base %s +%v: at %v the JVM's wall clock %v already reaches the stored %v", c.base, c.dur, x, wall(x), stored)
				break
			}
		}
		if read.Before(end) {
			t.Errorf("base %s +%v: stored %v reads back as %v, before the end %v", c.base, c.dur, stored, read, end)
		}
		if read.Sub(end) > time.Hour {
			t.Errorf("base %s +%v: stored %v reads back as %v, more than an hour after the end %v", c.base, c.dur, stored, read, end)
		}
	}
}
