package batontest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/fence/redisfence"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/ratelimit"
	"github.com/baton-go/baton/scheduler"
)

// maxErrLen bounds the text of a validation error, whatever the input.
const maxErrLen = 512

// Bad input anywhere in the module is a *baton.ValidationError matching
// baton.ErrInvalid (a cron spec a *scheduler.SpecError matching it), and
// its text stays short however long the input.
func TestEveryPackageReportsBadInputAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	huge := strings.Repeat("n", 10_000)
	mem := newMemory(t, nil)
	l := newLocker(t, mem, nil)
	lock, err := l.TryAcquire(ctx, "held", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release(ctx)
	sched, err := scheduler.New(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	noop := func(context.Context, scheduler.Run) error { return nil }
	minute := scheduler.AtMostFor(time.Minute)

	cases := map[string]func() error{
		"baton NewLocker nil":         func() error { _, err := baton.NewLocker(nil, nil); return err },
		"baton NewLocker typed nil":   func() error { _, err := baton.NewLocker((*memory.Provider)(nil), nil); return err },
		"baton NewLocker CallTimeout": func() error { _, err := baton.NewLocker(mem, &baton.Config{CallTimeout: -1}); return err },
		"baton TryAcquire empty name": func() error { _, err := l.TryAcquire(ctx, "", nil); return err },
		"baton TryAcquire huge name":  func() error { _, err := l.TryAcquire(ctx, huge, nil); return err },
		"baton Acquire huge LockedBy": func() error {
			_, err := l.Acquire(ctx, "x", &baton.AcquireOptions{LockedBy: huge})
			return err
		},
		"baton Acquire negative AtMostFor": func() error {
			_, err := l.Acquire(ctx, "x", &baton.AcquireOptions{AtMostFor: -time.Second})
			return err
		},
		"baton Extend zero": func() error { return lock.Extend(ctx, 0) },
		"lockprovider huge name": func() error {
			_, err := mem.Acquire(ctx, lockprovider.AcquireParams{Name: huge, Owner: "o", AtMostFor: time.Second})
			return err
		},
		"lockprovider owner": func() error {
			return mem.Release(ctx, lockprovider.ReleaseParams{Name: "x", Owner: huge})
		},
		"scheduler New nil":            func() error { _, err := scheduler.New(nil, nil); return err },
		"scheduler New CallTimeout":    func() error { _, err := scheduler.New(mem, &scheduler.Config{CallTimeout: -1}); return err },
		"scheduler New huge LockedBy":  func() error { _, err := scheduler.New(mem, &scheduler.Config{LockedBy: huge}); return err },
		"scheduler huge job name":      func() error { _, err := sched.Every(time.Minute).Locked(huge, minute).Do(noop); return err },
		"scheduler huge unlocked name": func() error { _, err := sched.Every(time.Minute).Name(huge).Do(noop); return err },
		"scheduler conflicting huge names": func() error {
			_, err := sched.Every(time.Minute).Name(huge).Locked(huge+"x", minute).Do(noop)
			return err
		},
		"scheduler nil job": func() error { _, err := sched.Every(time.Minute).Locked(huge, minute).Do(nil); return err },
		"scheduler Every 0": func() error { _, err := sched.Every(0).Locked("x", minute).Do(noop); return err },
		"scheduler AtLeastFor over AtMostFor": func() error {
			_, err := sched.Every(time.Minute).Locked(huge[:100], minute, scheduler.AtLeastFor(time.Hour)).Do(noop)
			return err
		},
		"ratelimit nil store": func() error { _, err := ratelimit.New(nil, []ratelimit.Limit{ratelimit.PerSecond(1)}, nil); return err },
		"ratelimit zero rate": func() error {
			_, err := ratelimit.New(mem, []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Period: time.Second}}, nil)
			return err
		},
		"ratelimit huge policy name": func() error {
			lim := ratelimit.PerSecond(1)
			lim.Name = strings.Repeat("é", 5000)
			_, err := ratelimit.New(mem, []ratelimit.Limit{lim}, nil)
			return err
		},
		"ratelimit huge key": func() error {
			r, err := ratelimit.New(mem, []ratelimit.Limit{ratelimit.PerSecond(1)}, nil)
			if err != nil {
				return err
			}
			_, err = r.Allow(ctx, huge+huge)
			return err
		},
		"fence table":     func() error { _, err := pgfence.NewGuard(huge, "id", nil); return err },
		"fence redis nil": func() error { _, err := redisfence.NewGuard(nil); return err },
		"fence guard nil db": func() error {
			g, err := pgfence.NewGuard("t", "id", nil)
			if err != nil {
				return err
			}
			return g.Mark(ctx, nil, 1, "k")
		},
	}
	for name, f := range cases {
		err := f()
		var ve *baton.ValidationError
		if !errors.Is(err, baton.ErrInvalid) || !errors.As(err, &ve) {
			t.Errorf("%s: %v; want a *baton.ValidationError matching baton.ErrInvalid", name, err)
			continue
		}
		if len(err.Error()) > maxErrLen {
			t.Errorf("%s: error text of %d bytes: %.200s…", name, len(err.Error()), err)
		}
	}

	// A cron spec is a SpecError, also bad input, also short.
	_, err = sched.Cron(huge).Locked("c", minute).Do(noop)
	var se *scheduler.SpecError
	if !errors.Is(err, baton.ErrInvalid) || !errors.Is(err, scheduler.ErrInvalidSpec) || !errors.As(err, &se) {
		t.Errorf("bad cron spec: %v; want a *scheduler.SpecError matching baton.ErrInvalid", err)
	} else if len(err.Error()) > maxErrLen {
		t.Errorf("bad cron spec: error text of %d bytes", len(err.Error()))
	}

	// One vocabulary: the packages' sentinels are the same values.
	if scheduler.ErrInvalid != baton.ErrInvalid || ratelimit.ErrInvalid != baton.ErrInvalid || fence.ErrInvalid != baton.ErrInvalid ||
		scheduler.ErrNotAcquired != baton.ErrNotAcquired {
		t.Error("ErrInvalid or ErrNotAcquired differ between packages")
	}
}
