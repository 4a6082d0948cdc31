package shedlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/lockprovider/shedlock"
	"github.com/baton-go/baton/scheduler"
)

// The inputs Spring's converter (which ShedLock's annotations use) accepts,
// with the values it gives them.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT20.345S":      20*time.Second + 345*time.Millisecond,
		"PT15M":          15 * time.Minute,
		"+PT15M":         15 * time.Minute,
		"pt15m":          15 * time.Minute,
		"PT10H":          10 * time.Hour,
		"P2D":            48 * time.Hour,
		"P1D":            24 * time.Hour,
		"P2DT3H4M":       51*time.Hour + 4*time.Minute,
		"PT30S":          30 * time.Second,
		"PT0S":           0,
		"PT0.5S":         500 * time.Millisecond,
		"PT1,5S":         1500 * time.Millisecond,
		"PT-6H+420M":     time.Hour,
		"PT1.000000001S": time.Second + 1,
		"10ns":           10,
		"10US":           10 * time.Microsecond,
		"10ms":           10 * time.Millisecond,
		"+10s":           10 * time.Second,
		"10M":            10 * time.Minute,
		"10h":            10 * time.Hour,
		"10d":            240 * time.Hour,
		"30000":          30 * time.Second,
		"0":              0,
	} {
		got, err := shedlock.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestParseDurationErrors(t *testing.T) {
	for _, in := range []string{
		"", "10foo", "P", "PT", "P1Y", "P1M", "P1W", "PT1.5M", "1.5s", "s", " 10s", "10 s",
		"-10s", "-PT6H3M", "PT-1S", // negative: ShedLock's annotations refuse them too
		"P200000D", "9223372036854775807s", "PT99999999999999999999S",
	} {
		d, err := shedlock.ParseDuration(in)
		var ve *batontype.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, shedlock.ErrInvalidDuration) || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("ParseDuration(%q) = %v, %v; want a *batontype.ValidationError matching ErrInvalidDuration", in, d, err)
		}
	}
}

// A @SchedulerLock triple becomes the name and options of a locked job;
// empty durations leave the scheduler's defaults in force.
func TestSchedulerLockOptions(t *testing.T) {
	mem, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(mem, &scheduler.Config{AtMostFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	noop := func(ctx context.Context, run scheduler.Run) error { return nil }
	for _, l := range []shedlock.SchedulerLock{
		{Name: "report", LockAtMostFor: "PT14M", LockAtLeastFor: "PT14M"},
		{Name: "defaults"},
		{Name: "at-least-only", LockAtLeastFor: "30s"},
	} {
		lk, err := l.Parse()
		if err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		if lk.Name != l.Name {
			t.Errorf("name %q, want %q", lk.Name, l.Name)
		}
		if _, err := s.Every(time.Hour).Locked(lk.Name, scheduler.Bounds(lk)).Do(noop); err != nil {
			t.Errorf("%+v: Do: %v", l, err)
		}
	}
	for _, l := range []shedlock.SchedulerLock{
		{Name: "", LockAtMostFor: "PT1M"},
		{Name: "bad-at-most", LockAtMostFor: "PT1Y"},
		{Name: "bad-at-least", LockAtMostFor: "PT1M", LockAtLeastFor: "forever"},
		{Name: "inverted", LockAtMostFor: "PT1M", LockAtLeastFor: "PT2M"},
		{Name: "zero", LockAtMostFor: "PT0S"},
	} {
		if _, err := l.Parse(); !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("%+v: Parse error %v, want ErrInvalid", l, err)
		}
	}
}
