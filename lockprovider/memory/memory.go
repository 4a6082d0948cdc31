package memory

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/lockprovider"
)

// Config configures a Provider. The zero value (or a nil *Config) is ready to
// use, and no value of it is invalid.
type Config struct {
	// Now is the provider's clock, the "server time" of its leases.
	// Default (nil): time.Now, which is also the fake clock inside a
	// testing/synctest bubble.
	Now func() time.Time
}

// Provider is an in-process provider of leases and rate limits. It is safe
// for concurrent use.
type Provider struct {
	now func() time.Time

	mu      sync.Mutex
	names   map[string]*record
	waiters map[string]map[*waiter]struct{}

	rate rateState
	ops  opsState // ledger and registry; see ops.go

	control controlState // paused flags and run requests; see control.go
}

// record is everything the provider remembers about one name. Records are
// never removed, so the fencing counter and the newest tick survive release
// and expiry.
type record struct {
	lease    batontype.Lease // current or last lease; Owner "" before the first grant
	lockedBy string
	fence    int64     // last fencing token issued for the name
	lastTick time.Time // newest tick granted, or zero
}

type waiter struct{ ch chan<- struct{} }

// New returns an empty provider. A nil cfg means the defaults. No Config
// can be invalid, so the error is always nil today; it is there so that
// every provider constructor has the same shape, and a future field that
// can be invalid is not a breaking change.
func New(cfg *Config) (*Provider, error) {
	p := &Provider{
		now:     time.Now,
		names:   make(map[string]*record),
		waiters: make(map[string]map[*waiter]struct{}),
		rate:    rateState{},
	}
	if cfg != nil && cfg.Now != nil {
		p.now = cfg.Now
	}
	return p, nil
}

// held reports whether r has a lease in force at now.
func (r *record) held(now time.Time) bool {
	return r.lease.Owner != "" && now.Before(r.lease.Until)
}

// Acquire implements lockprovider.Provider.
func (p *Provider) Acquire(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Live(ctx, ap.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r := p.names[ap.Name]
	if r == nil {
		r = &record{}
		p.names[ap.Name] = r
	}
	if r.held(now) {
		if r.lease.Owner == ap.Owner {
			// A retried acquire gets the grant it already has.
			return r.lease, nil
		}
		return batontype.Lease{}, batontype.ErrNotAcquired
	}
	if !ap.Tick.IsZero() {
		if !ap.Tick.After(r.lastTick) {
			return batontype.Lease{}, batontype.ErrStaleTick
		}
		r.lastTick = ap.Tick
	}
	r.fence++
	r.lockedBy = ap.LockedBy
	r.lease = batontype.Lease{
		Name:         ap.Name,
		Owner:        ap.Owner,
		Token:        r.fence,
		GrantedAt:    now,
		Until:        now.Add(ap.AtMostFor),
		AtLeastUntil: now.Add(ap.AtLeastFor),
		Tick:         ap.Tick,
	}
	return r.lease, nil
}

// Extend implements lockprovider.Provider.
func (p *Provider) Extend(ctx context.Context, ep lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Live(ctx, ep.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r := p.names[ep.Name]
	if r == nil || !r.held(now) || r.lease.Owner != ep.Owner {
		return batontype.Lease{}, batontype.ErrNotHeld
	}
	r.lease.Until = now.Add(ep.AtMostFor)
	r.lease.AtLeastUntil = now.Add(ep.AtLeastFor)
	return r.lease, nil
}

// Release implements lockprovider.Provider.
func (p *Provider) Release(ctx context.Context, rp lockprovider.ReleaseParams) error {
	if err := check.Live(ctx, rp.Validate()); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r := p.names[rp.Name]
	if r == nil || !r.held(now) || r.lease.Owner != rp.Owner {
		return batontype.ErrNotHeld
	}
	if r.lease.AtLeastUntil.After(now) {
		// Still inside the minimum hold: the lease ends at that bound.
		r.lease.Until = r.lease.AtLeastUntil
		return nil
	}
	r.lease.Until = now
	for w := range p.waiters[rp.Name] {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// NotifyRelease implements lockprovider.ReleaseNotifier. A release that
// leaves the lease in force until its AtLeastFor bound is not announced,
// since the name is not free yet; like expiry, waiters find it by polling.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return func() {}, err
	}
	if err := batontype.ValidateName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &waiter{ch: ch}
	p.mu.Lock()
	set := p.waiters[name]
	if set == nil {
		set = make(map[*waiter]struct{})
		p.waiters[name] = set
	}
	set[w] = struct{}{}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			delete(p.waiters[name], w)
			if len(p.waiters[name]) == 0 {
				delete(p.waiters, name)
			}
		})
	}, nil
}

// Inspect implements lockprovider.Inspector.
func (p *Provider) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Live(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.names[name]
	if r == nil || r.fence == 0 {
		return batontype.LeaseInfo{Name: name}, nil
	}
	return r.info(name, p.now()), nil
}

// List implements lockprovider.Inspector. It reports every name ever
// granted, sorted by name.
func (p *Provider) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := check.Live(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	out := make([]batontype.LeaseInfo, 0, len(p.names))
	for name, r := range p.names {
		if r.fence == 0 {
			continue
		}
		out = append(out, r.info(name, now))
	}
	slices.SortFunc(out, func(a, b batontype.LeaseInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (r *record) info(name string, now time.Time) batontype.LeaseInfo {
	return batontype.LeaseInfo{
		Name:      name,
		Exists:    true,
		Held:      r.held(now),
		LockedBy:  r.lockedBy,
		GrantedAt: r.lease.GrantedAt,
		Until:     r.lease.Until,
		Token:     r.fence,
		LastTick:  r.lastTick,

		AtLeastUntil: lockprovider.MinHold(r.lease.GrantedAt, r.lease.AtLeastUntil),
	}
}
