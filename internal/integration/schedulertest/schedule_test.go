package schedulertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/scheduler"
)

// ticksOf runs a job on schedule b for span of fake time and returns its
// ticks and the fake times it started at.
func ticksOf(t *testing.T, span time.Duration, build func(s *scheduler.Scheduler) *scheduler.Builder) (ticks, starts []time.Time) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		s := newSched(t, newMemory(t, nil), nil)
		var mu sync.Mutex
		must(build(s).Do(func(ctx context.Context, run scheduler.Run) error {
			mu.Lock()
			defer mu.Unlock()
			ticks = append(ticks, run.Tick)
			starts = append(starts, time.Now())
			return nil
		}))
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(span)
		synctest.Wait()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return ticks, starts
}

func TestEveryAlignedToEpoch(t *testing.T) {
	// The bubble's clock starts at 2000-01-01 00:00 UTC; move off the grid
	// first so alignment is not an accident of the start time.
	ticks, starts := ticksOf(t, 65*time.Second, func(s *scheduler.Scheduler) *scheduler.Builder {
		time.Sleep(3*time.Second + 7*time.Millisecond)
		return s.Every(7 * time.Second)
	})
	// Started at 00:00:03.007 for 65s: ticks at 7s, 14s, ..., 63s.
	if len(ticks) != 9 {
		t.Fatalf("got %d ticks in 65s of Every(7s), want 9: %v", len(ticks), ticks)
	}
	for i, tk := range ticks {
		if tk.UnixNano()%int64(7*time.Second) != 0 {
			t.Errorf("tick %v is not a multiple of 7s since the epoch", tk)
		}
		if !starts[i].Equal(tk) {
			t.Errorf("tick %v started at %v; want on time", tk, starts[i])
		}
		if i > 0 && tk.Sub(ticks[i-1]) != 7*time.Second {
			t.Errorf("ticks %v and %v are not 7s apart", ticks[i-1], tk)
		}
	}
}

func TestEveryOffset(t *testing.T) {
	ticks, _ := ticksOf(t, 2*time.Hour+16*time.Minute, func(s *scheduler.Scheduler) *scheduler.Builder {
		return s.Every(time.Hour, scheduler.Offset(15*time.Minute))
	})
	want := []string{"00:15:00", "01:15:00", "02:15:00"}
	if len(ticks) != len(want) {
		t.Fatalf("ticks = %v, want %v", ticks, want)
	}
	for i, tk := range ticks {
		if got := tk.UTC().Format(time.TimeOnly); got != want[i] {
			t.Errorf("tick %d = %s, want %s", i, got, want[i])
		}
	}
}

func TestCronSpecs(t *testing.T) {
	cases := []struct {
		spec string
		span time.Duration
		want []string // UTC times of the ticks
	}{
		{"*/20 * * * *", 61 * time.Minute, []string{"00:20:00", "00:40:00", "01:00:00"}},
		{"30 */1 * * * *", 3 * time.Minute, []string{"00:00:30", "00:01:30", "00:02:30"}},
		{"@hourly", 3*time.Hour + time.Second, []string{"01:00:00", "02:00:00", "03:00:00"}},
		{"@every 45m", 2 * time.Hour, []string{"00:45:00", "01:30:00"}},
		{"CRON_TZ=Asia/Kolkata 30 6 * * *", 24*time.Hour + 30*time.Minute, []string{"01:00:00"}}, // 06:30 IST = 01:00 UTC
		{"TZ=UTC @daily", 49 * time.Hour, []string{"00:00:00", "00:00:00"}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			ticks, _ := ticksOf(t, c.span, func(s *scheduler.Scheduler) *scheduler.Builder { return s.Cron(c.spec) })
			var got []string
			for _, tk := range ticks {
				got = append(got, tk.UTC().Format(time.TimeOnly))
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("ticks = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCronConfigLocation(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		s := newSched(t, newMemory(t, nil), &scheduler.Config{Location: ny})
		job := must(s.Cron("0 9 * * *").Name("nine").Do(func(context.Context, scheduler.Run) error { return nil }))
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		// 2000-01-01 is winter: 09:00 EST is 14:00 UTC.
		if got := job.Next().UTC().Format(time.TimeOnly); got != "14:00:00" {
			t.Errorf("Next = %s UTC, want 14:00:00", got)
		}
	})
}

func TestCronSpecErrors(t *testing.T) {
	s := newSched(t, newMemory(t, nil), nil)
	cases := []struct {
		spec, field string
		pos         int
		value       string
		inMsg       string
	}{
		{"", "", 0, "", "empty"},
		{"* * *", "", 0, "* * *", "has 3 fields"},
		{"* * * * * * *", "", 0, "* * * * * * *", "has 7 fields"},
		{"61 * * * *", "minute", 1, "61", "above maximum"},
		{"0 25 * * *", "hour", 2, "25", "above maximum"},
		{"0 0 0 * *", "day of month", 3, "0", "below minimum"},
		{"0 0 * 13 *", "month", 4, "13", "above maximum"},
		{"0 0 * * mon-xyz", "day of week", 5, "mon-xyz", "failed to parse"},
		{"60 * * * * *", "second", 1, "60", "above maximum"},
		{"0 */0 * * * *", "minute", 2, "*/0", "step"},
		{"0 0 30 2 *", "", 0, "0 0 30 2 *", "never fires"},
		{"CRON_TZ=Nowhere/Atlantis * * * * *", "CRON_TZ", 0, "Nowhere/Atlantis", "not a known time zone"},
		{"CRON_TZ=UTC", "", 0, "", "no schedule"},
		{"TZ= * * * * *", "TZ", 0, "", "no time zone"},
		{"@sometimes", "descriptor", 0, "@sometimes", "is not one of"},
		{"@every 0s", "@every", 1, "0s", "at least"},
		{"@every soon", "@every", 1, "soon", "not a duration"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			_, err := s.Cron(c.spec).Locked("job", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error { return nil })
			if !errors.Is(err, scheduler.ErrInvalidSpec) || !errors.Is(err, scheduler.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalidSpec", err)
			}
			var se *scheduler.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("err = %T, want *SpecError", err)
			}
			if se.Spec != c.spec || se.Field != c.field || se.Position != c.pos || se.Value != c.value {
				t.Errorf("SpecError{Spec %q, Field %q, Position %d, Value %q}, want {%q, %q, %d, %q}",
					se.Spec, se.Field, se.Position, se.Value, c.spec, c.field, c.pos, c.value)
			}
			if !strings.Contains(err.Error(), c.inMsg) {
				t.Errorf("message %q does not contain %q", err, c.inMsg)
			}
			t.Log(err)
		})
	}
}
