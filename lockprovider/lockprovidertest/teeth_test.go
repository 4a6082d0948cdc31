package lockprovidertest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/memory"
)

// The checker has teeth: each of these wrappers injects one bug into the
// memory provider, and the workload's history must be found wrong within a
// few short runs. Each run's seed is logged, so a miss replays.

// releaseAnyOwner releases without the owner check.
type releaseAnyOwner struct{ *memory.Provider }

func (p releaseAnyOwner) Release(ctx context.Context, r lockprovider.ReleaseParams) error {
	err := p.Provider.Release(ctx, r)
	if errors.Is(err, batontype.ErrNotHeld) {
		_, err = p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: r.Name})
		if errors.Is(err, batontype.ErrNotHeld) {
			return err
		}
		return nil
	}
	return err
}

// extendExpired extends a lease that has lapsed, if nobody took it over.
type extendExpired struct{ *memory.Provider }

func (p extendExpired) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	l, err := p.Provider.Extend(ctx, e)
	if errors.Is(err, batontype.ErrNotHeld) {
		if l2, err2 := p.Provider.Acquire(ctx, lockprovider.AcquireParams{Name: e.Name, Owner: e.Owner, AtMostFor: e.AtMostFor, AtLeastFor: e.AtLeastFor}); err2 == nil {
			return l2, nil
		}
	}
	return l, err
}

// reuseToken reports every other new grant with the previous token.
type reuseToken struct {
	*memory.Provider
	mu sync.Mutex
	n  int
}

func (p *reuseToken) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	l, err := p.Provider.Acquire(ctx, a)
	if err == nil && l.Token > 1 {
		p.mu.Lock()
		p.n++
		if p.n%2 == 0 {
			l.Token--
		}
		p.mu.Unlock()
	}
	return l, err
}

// longUntil reports leases a fifth longer than they are, so holders trust
// them past their end.
type longUntil struct{ *memory.Provider }

func (p longUntil) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	l, err := p.Provider.Acquire(ctx, a)
	l.Until = l.Until.Add(a.AtMostFor / 5)
	return l, err
}

func (p longUntil) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	l, err := p.Provider.Extend(ctx, e)
	l.Until = l.Until.Add(e.AtMostFor / 5)
	return l, err
}

// clockAhead decides expiry on a client clock 2s ahead of the backend's:
// it takes over any lease that would have ended by then.
type clockAhead struct{ *memory.Provider }

func (p clockAhead) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	l, err := p.Provider.Acquire(ctx, a)
	if !errors.Is(err, batontype.ErrNotAcquired) {
		return l, err
	}
	info, ierr := p.Inspect(ctx, a.Name)
	if ierr != nil || !info.Held || !info.Until.Before(time.Now().Add(2*time.Second)) {
		return l, err
	}
	if _, ferr := p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: a.Name, Token: info.Token}); ferr != nil {
		return l, err
	}
	return p.Provider.Acquire(ctx, a)
}

// hideGrant answers every third grant with a definite ErrNotAcquired: an
// unknown outcome reported as a refusal.
type hideGrant struct {
	*memory.Provider
	mu sync.Mutex
	n  int
}

func (p *hideGrant) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	l, err := p.Provider.Acquire(ctx, a)
	if err == nil {
		p.mu.Lock()
		p.n++
		hide := p.n%3 == 0
		p.mu.Unlock()
		if hide {
			return batontype.Lease{}, batontype.ErrNotAcquired
		}
	}
	return l, err
}

// earlyBound behaves as a provider whose Extend moved the AtLeastFor bound
// 150ms earlier: a release after that earlier bound frees the name at once.
type earlyBound struct {
	*memory.Provider
	mu    sync.Mutex
	bound map[string]time.Time // owner → the bound as moved
}

func (p *earlyBound) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	l, err := p.Provider.Extend(ctx, e)
	if err == nil && e.AtLeastFor > 0 {
		p.mu.Lock()
		p.bound[e.Owner] = time.Now().Add(e.AtLeastFor - 150*time.Millisecond)
		p.mu.Unlock()
	}
	return l, err
}

func (p *earlyBound) Release(ctx context.Context, r lockprovider.ReleaseParams) error {
	p.mu.Lock()
	b, moved := p.bound[r.Owner]
	delete(p.bound, r.Owner)
	p.mu.Unlock()
	if moved && time.Now().After(b) {
		if info, err := p.Inspect(ctx, r.Name); err == nil && info.Held && info.AtLeastUntil.After(time.Now()) {
			if _, err := p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: r.Name, Token: info.Token}); err == nil {
				return nil
			}
		}
	}
	return p.Provider.Release(ctx, r)
}

func TestCheckerCatchesInjectedBugs(t *testing.T) {
	mem := func() *memory.Provider {
		p, err := memory.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bugs := []struct {
		name string
		p    func() lockprovider.Provider
		w    Workload
	}{
		{"ReleaseWithoutOwnerCheck", func() lockprovider.Provider { return releaseAnyOwner{mem()} }, Workload{}},
		{"ExtendOfExpiredLease", func() lockprovider.Provider { return extendExpired{mem()} }, Workload{}},
		{"TokenReused", func() lockprovider.Provider { return &reuseToken{Provider: mem()} }, Workload{}},
		{"TrustWindowLongerThanLease", func() lockprovider.Provider { return longUntil{mem()} }, Workload{}},
		{"ClientClock2sAhead", func() lockprovider.Provider { return clockAhead{mem()} }, Workload{}},
		{"GrantReportedAsRefusal", func() lockprovider.Provider { return &hideGrant{Provider: mem()} }, Workload{}},
		// Long leases with a minimum hold, so that the moved bound lies
		// inside holds that end early.
		{"ExtendMovesBoundEarlier", func() lockprovider.Provider { return &earlyBound{Provider: mem(), bound: map[string]time.Time{}} },
			Workload{Leases: []time.Duration{400 * time.Millisecond, 600 * time.Millisecond}}},
	}
	for _, bug := range bugs {
		t.Run(bug.name, func(t *testing.T) {
			t.Parallel()
			const runs = 5
			for i := range runs {
				w := bug.w
				w.Seed = int64(1000*i + 7)
				h := history.New()
				seed, err := w.Run(t.Context(), h, bug.p())
				if err != nil {
					t.Fatal(err)
				}
				r := history.Check(h, history.Config{Seed: seed})
				if !r.OK() {
					t.Logf("caught in run %d (seed %d): %s", i+1, seed, r.Violations[0])
					return
				}
				t.Logf("run %d (seed %d) not caught: %s", i+1, seed, r)
			}
			t.Errorf("the checker missed the bug in %d runs", runs)
		})
	}
}
