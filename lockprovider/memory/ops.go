package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

// opsState holds the run ledger and the job registry. Guarded by
// Provider.mu.
type opsState struct {
	runs      map[string][]batontype.RunRecord // per job, oldest first
	claims    map[string]int64                 // runs opened per job, for the amortised trim
	instances map[string]batontype.Instance
	departed  map[string]batontype.Departed // kept batontype.DepartedRetention
}

// ForceRelease implements lockprovider.Admin. The run the lease belongs
// to, if the ledger holds it, is marked with who released it.
func (p *Provider) ForceRelease(ctx context.Context, fp lockprovider.ForceReleaseParams) (batontype.LeaseInfo, error) {
	if err := check.Live(ctx, fp.Validate()); err != nil {
		return batontype.LeaseInfo{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r := p.names[fp.Name]
	if r == nil || !r.held(now) || (fp.Token != 0 && r.fence != fp.Token) {
		return batontype.LeaseInfo{}, batontype.ErrNotHeld
	}
	info := r.info(fp.Name, now)
	r.lease.Until = now
	r.lease.AtLeastUntil = now
	runs := p.opsLocked().runs[fp.Name]
	if i := slices.IndexFunc(runs, func(rr batontype.RunRecord) bool { return rr.Token == info.Token }); i >= 0 {
		runs[i].ReleasedBy, runs[i].ReleasedAt = fp.By, now
	}
	p.wakeLocked(fp.Name)
	return info, nil
}

// wakeLocked announces a release of name to its waiters. p.mu is held.
func (p *Provider) wakeLocked(name string) {
	for w := range p.waiters[name] {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// ResetRate implements lockprovider.Admin.
func (p *Provider) ResetRate(ctx context.Context, key string) error {
	if err := check.Live(ctx, batontype.ValidateName(key)); err != nil {
		return err
	}
	s := &p.rate
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.entries {
		if k.key == key {
			delete(s.entries, k)
		}
	}
	return nil
}

// Ping implements lockprovider.Admin.
func (p *Provider) Ping(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// ListRates implements lockprovider.RateLister.
func (p *Provider) ListRates(ctx context.Context) ([]batontype.RateInfo, error) {
	if err := check.Live(ctx); err != nil {
		return nil, err
	}
	s := &p.rate
	s.mu.Lock()
	defer s.mu.Unlock()
	now := p.now().UnixMicro()
	var out []batontype.RateInfo
	for k, e := range s.entries {
		if e.expires <= now {
			continue
		}
		a, per, ok := ratewire.ParseID(k.id)
		if !ok {
			continue
		}
		out = append(out, batontype.RateInfo{Key: k.key, Algorithm: a, Period: per, ResetAt: time.UnixMicro(e.expires)})
	}
	slices.SortFunc(out, func(a, b batontype.RateInfo) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return int(a.Algorithm) - int(b.Algorithm)
	})
	return out, nil
}

// AcquireRun implements lockprovider.Ledger.
func (p *Provider) AcquireRun(ctx context.Context, ap lockprovider.AcquireParams, run lockprovider.RunStart) (batontype.Lease, error) {
	if err := check.Args(ctx, run.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	l, err := p.Acquire(ctx, ap)
	if err != nil {
		return l, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opsLocked()
	runs := o.runs[ap.Name]
	if n := len(runs); n > 0 && runs[n-1].Token == l.Token {
		return l, nil // a retried acquire: the run is already open
	}
	runs = append(runs, batontype.RunRecord{
		Job: ap.Name, Tick: ap.Tick, LockedBy: ap.LockedBy, Token: l.Token, Started: l.GrantedAt,
		CatchUp: run.CatchUp, Manual: run.Manual,
	})
	// The retention is applied on every RetentionSlack-th claim of the
	// job, as the Redis and PostgreSQL providers do.
	o.claims[ap.Name]++
	if o.claims[ap.Name]%batontype.RetentionSlack == 0 {
		runs = trimRuns(runs, run.Retention, l.GrantedAt)
	}
	o.runs[ap.Name] = runs
	return l, nil
}

// ReleaseRun implements lockprovider.Ledger.
func (p *Provider) ReleaseRun(ctx context.Context, rp lockprovider.ReleaseParams, end lockprovider.RunEnd) error {
	if err := check.Live(ctx, end.Validate(), rp.Validate()); err != nil {
		return err
	}
	relErr := p.Release(ctx, rp)
	if relErr != nil && !errors.Is(relErr, batontype.ErrNotHeld) {
		return relErr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opsLocked()
	// The record AcquireRun opened is completed; one trimmed meanwhile (the
	// run fell out of the retention) is not recorded again.
	runs := o.runs[end.Run.Job]
	if i := slices.IndexFunc(runs, func(r batontype.RunRecord) bool { return r.Token == end.Run.Token }); i >= 0 {
		fin := p.now()
		if end.Elapsed > 0 {
			fin = runs[i].Started.Add(end.Elapsed)
		}
		runs[i].Finished, runs[i].Outcome, runs[i].Error = fin, end.Outcome, batontype.CutError(end.Error)
		runs[i].Stack = batontype.CutStack(end.Stack)
	}
	return relErr
}

// trimRuns applies a retention to one job's runs, oldest first.
func trimRuns(runs []batontype.RunRecord, r batontype.Retention, now time.Time) []batontype.RunRecord {
	r = r.WithDefaults()
	if n := len(runs) - r.MaxRuns; n > 0 {
		runs = slices.Delete(runs, 0, n)
	}
	cut := now.Add(-r.MaxAge)
	i := 0
	for i < len(runs) && runs[i].Started.Before(cut) {
		i++
	}
	return slices.Delete(runs, 0, i)
}

// Runs implements lockprovider.Ledger.
func (p *Provider) Runs(ctx context.Context, q batontype.RunQuery) ([]batontype.RunRecord, error) {
	if err := check.Live(ctx, q.Validate()); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	runs := p.opsLocked().runs[q.Job]
	var out []batontype.RunRecord
	for i := len(runs) - 1; i >= 0 && len(out) < q.Lim(); i-- {
		r := runs[i]
		if (q.Since.IsZero() || !r.Started.Before(q.Since)) && (q.Until.IsZero() || r.Started.Before(q.Until)) {
			out = append(out, r)
		}
	}
	return out, nil
}

// LastRuns implements lockprovider.Ledger.
func (p *Provider) LastRuns(ctx context.Context, job string) (last, lastSuccess batontype.RunRecord, err error) {
	if err := check.Live(ctx, batontype.ValidateName(job)); err != nil {
		return last, lastSuccess, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opsLocked()
	runs := o.runs[job]
	if len(runs) > 0 {
		last = runs[len(runs)-1]
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Outcome == batontype.OutcomeSucceeded {
			return last, runs[i], nil
		}
	}
	return last, lastSuccess, nil
}

// Register implements lockprovider.Registry.
func (p *Provider) Register(ctx context.Context, inst batontype.Instance, ttl time.Duration) error {
	if err := check.Live(ctx, inst.Validate(ttl)); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	inst.Jobs = slices.Clone(inst.Jobs)
	inst.Heartbeat, inst.Until = now, now.Add(ttl)
	o := p.opsLocked()
	o.instances[inst.LockedBy] = inst
	delete(o.departed, inst.LockedBy)
	return nil
}

// Heartbeat implements lockprovider.Registry.
func (p *Provider) Heartbeat(ctx context.Context, lockedBy string, ttl time.Duration) error {
	if err := check.Live(ctx, batontype.ValidateLockedBy(lockedBy), batontype.ValidateRegistryTTL(ttl)); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	o := p.opsLocked()
	o.lapseLocked(now)
	inst, ok := o.instances[lockedBy]
	if !ok {
		return batontype.ErrNotRegistered
	}
	inst.Heartbeat, inst.Until = now, now.Add(ttl)
	o.instances[lockedBy] = inst
	return nil
}

// Deregister implements lockprovider.Registry.
func (p *Provider) Deregister(ctx context.Context, lockedBy string) error {
	if err := check.Live(ctx, batontype.ValidateLockedBy(lockedBy)); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	o := p.opsLocked()
	o.lapseLocked(now)
	if inst, ok := o.instances[lockedBy]; ok {
		inst.Until = now
		o.departed[lockedBy] = batontype.Departed{Instance: inst, Left: true}
		delete(o.instances, lockedBy)
	}
	return nil
}

// Departed implements lockprovider.Departures.
func (p *Provider) Departed(ctx context.Context) ([]batontype.Departed, error) {
	if err := check.Live(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opsLocked()
	o.lapseLocked(p.now())
	return byLockedBy(o.departed, func(d *batontype.Departed) *batontype.Instance { return &d.Instance }), nil
}

// byLockedBy returns copies of the registry entries in m, sorted by
// LockedBy; inst returns an entry's instance. nil for none.
func byLockedBy[T any](m map[string]T, inst func(*T) *batontype.Instance) []T {
	var out []T
	for _, e := range m {
		i := inst(&e)
		i.Jobs = slices.Clone(i.Jobs)
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(inst(&a).LockedBy, inst(&b).LockedBy) })
	return out
}

// lapseLocked moves the entries that lapsed by now to the departed ones
// (gone), and forgets those departed longer than the retention ago.
func (o *opsState) lapseLocked(now time.Time) {
	for k, inst := range o.instances {
		if !inst.Until.After(now) {
			o.departed[k] = batontype.Departed{Instance: inst}
			delete(o.instances, k)
		}
	}
	for k, d := range o.departed {
		if !d.Until.Add(batontype.DepartedRetention).After(now) {
			delete(o.departed, k)
		}
	}
}

// Instances implements lockprovider.Registry.
func (p *Provider) Instances(ctx context.Context) ([]batontype.Instance, error) {
	if err := check.Live(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opsLocked()
	o.lapseLocked(p.now())
	return byLockedBy(o.instances, func(i *batontype.Instance) *batontype.Instance { return i }), nil
}

// opsLocked returns the ops state, made on first use. p.mu is held.
func (p *Provider) opsLocked() *opsState {
	o := &p.ops
	if o.runs == nil {
		o.runs = make(map[string][]batontype.RunRecord)
		o.claims = make(map[string]int64)
		o.instances = make(map[string]batontype.Instance)
		o.departed = make(map[string]batontype.Departed)
	}
	return o
}
