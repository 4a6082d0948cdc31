package schedulertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/scheduler"
)

func TestBadInput(t *testing.T) {
	s := newSched(t, newMemory(t, nil), nil)
	must(s.Every(time.Minute).Locked("taken", scheduler.AtMostFor(time.Minute)).Do(noop))
	must(s.Every(time.Minute).Name("local").Do(noop))
	mostly := scheduler.AtMostFor(time.Minute)
	cases := []struct {
		name  string
		do    func() (*scheduler.Job, error)
		want  error
		field string
	}{
		{"empty name", func() (*scheduler.Job, error) { return s.Every(time.Minute).Locked("", mostly).Do(noop) }, scheduler.ErrInvalidName, "Name"},
		{"control char", func() (*scheduler.Job, error) { return s.Every(time.Minute).Locked("a\nb", mostly).Do(noop) }, scheduler.ErrInvalidName, "Name"},
		{"long name", func() (*scheduler.Job, error) {
			return s.Every(time.Minute).Locked(strings.Repeat("x", batontype.MaxNameLen+1), mostly).Do(noop)
		}, scheduler.ErrInvalidName, "Name"},
		{"empty unlocked name", func() (*scheduler.Job, error) { return s.Every(time.Minute).Name("").Do(noop) }, scheduler.ErrInvalidName, "Name"},
		{"conflicting names", func() (*scheduler.Job, error) { return s.Every(time.Minute).Name("a").Locked("b", mostly).Do(noop) }, scheduler.ErrInvalidName, "Name"},
		{"duplicate locked", func() (*scheduler.Job, error) { return s.Every(time.Hour).Locked("taken", mostly).Do(noop) }, scheduler.ErrDuplicateName, "Name"},
		{"duplicate unlocked", func() (*scheduler.Job, error) { return s.Every(time.Hour).Name("local").Do(noop) }, scheduler.ErrDuplicateName, "Name"},
		{"nil job", func() (*scheduler.Job, error) { return s.Every(time.Minute).Locked("n", mostly).Do(nil) }, scheduler.ErrNilJob, "Do"},
		{"no atMostFor", func() (*scheduler.Job, error) { return s.Every(time.Minute).Locked("n").Do(noop) }, scheduler.ErrInvalidDuration, "AtMostFor"},
		{"zero atMostFor", func() (*scheduler.Job, error) {
			return s.Every(time.Minute).Locked("n", scheduler.AtMostFor(0)).Do(noop)
		}, scheduler.ErrInvalidDuration, "AtMostFor"},
		{"negative atMostFor", func() (*scheduler.Job, error) {
			return s.Every(time.Minute).Locked("n", scheduler.AtMostFor(-time.Second)).Do(noop)
		}, scheduler.ErrInvalidDuration, "AtMostFor"},
		{"sub-ms atMostFor", func() (*scheduler.Job, error) {
			return s.Every(time.Minute).Locked("n", scheduler.AtMostFor(time.Microsecond)).Do(noop)
		}, scheduler.ErrInvalidDuration, "AtMostFor"},
		{"negative atLeastFor", func() (*scheduler.Job, error) {
			return s.Every(time.Minute).Locked("n", mostly, scheduler.AtLeastFor(-time.Second)).Do(noop)
		}, scheduler.ErrInvalidDuration, "AtLeastFor"},
		{"atLeastFor > atMostFor", func() (*scheduler.Job, error) {
			return s.Every(time.Minute).Locked("n", mostly, scheduler.AtLeastFor(2*time.Minute)).Do(noop)
		}, scheduler.ErrInvalidDuration, "AtLeastFor"},
		{"nil lock option", func() (*scheduler.Job, error) { return s.Every(time.Minute).Locked("n", mostly, nil).Do(noop) }, scheduler.ErrInvalidOption, "LockOption"},
		{"zero Every", func() (*scheduler.Job, error) { return s.Every(0).Locked("n", mostly).Do(noop) }, scheduler.ErrInvalidDuration, "Every"},
		{"negative Every", func() (*scheduler.Job, error) { return s.Every(-time.Minute).Locked("n", mostly).Do(noop) }, scheduler.ErrInvalidDuration, "Every"},
		{"sub-ms Every", func() (*scheduler.Job, error) { return s.Every(time.Microsecond).Locked("n", mostly).Do(noop) }, scheduler.ErrInvalidDuration, "Every"},
		{"negative offset", func() (*scheduler.Job, error) {
			return s.Every(time.Minute, scheduler.Offset(-time.Second)).Locked("n", mostly).Do(noop)
		}, scheduler.ErrInvalidDuration, "Offset"},
		{"offset >= period", func() (*scheduler.Job, error) {
			return s.Every(time.Minute, scheduler.Offset(time.Minute)).Locked("n", mostly).Do(noop)
		}, scheduler.ErrInvalidDuration, "Offset"},
		{"nil every option", func() (*scheduler.Job, error) { return s.Every(time.Minute, nil).Locked("n", mostly).Do(noop) }, scheduler.ErrInvalidOption, "EveryOption"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job, err := c.do()
			if job != nil || !errors.Is(err, c.want) || !errors.Is(err, scheduler.ErrInvalid) {
				t.Fatalf("Do = %v, %v; want nil, %v", job, err, c.want)
			}
			var ve *scheduler.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field {
				t.Fatalf("err %v: want a *ValidationError on field %s", err, c.field)
			}
			t.Log(err)
		})
	}
}

func TestCatchUpNeedsInspector(t *testing.T) {
	s := newSched(t, bare{newMemory(t, nil)}, nil)
	_, err := s.Every(time.Minute).Locked("c", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(noop)
	if !errors.Is(err, scheduler.ErrCatchUpNotSupported) {
		t.Fatalf("err = %v, want ErrCatchUpNotSupported", err)
	}
}

func TestDefaultDurations(t *testing.T) {
	s := newSched(t, newMemory(t, nil), &scheduler.Config{AtMostFor: time.Minute, AtLeastFor: 10 * time.Second})
	if _, err := s.Every(time.Minute).Locked("defaults").Do(noop); err != nil {
		t.Errorf("Locked without durations under defaults: %v", err)
	}
	// An explicit atMostFor below the default atLeastFor is a conflict, not a clamp.
	_, err := s.Every(time.Minute).Locked("short", scheduler.AtMostFor(5*time.Second)).Do(noop)
	if !errors.Is(err, scheduler.ErrInvalidDuration) {
		t.Errorf("err = %v, want ErrInvalidDuration", err)
	}
}

func TestNewBadConfig(t *testing.T) {
	if _, err := scheduler.New(nil, nil); !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("New(nil provider) = %v, want ErrInvalid", err)
	}
	cases := map[string]scheduler.Config{
		"negative AtMostFor":       {AtMostFor: -time.Second},
		"negative AtLeastFor":      {AtLeastFor: -time.Second},
		"atLeast over atMost":      {AtMostFor: time.Second, AtLeastFor: time.Minute},
		"negative CallTimeout":     {CallTimeout: -time.Second},
		"control char in LockedBy": {LockedBy: "host\x00"},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := scheduler.New(newMemory(t, nil), &cfg)
			var ve *scheduler.ValidationError
			if s != nil || !errors.Is(err, scheduler.ErrInvalid) || !errors.As(err, &ve) {
				t.Errorf("New = %v, %v; want a *ValidationError", s, err)
			}
		})
	}
}
