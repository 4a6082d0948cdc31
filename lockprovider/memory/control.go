package memory

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/lockprovider"
)

// controlState holds the paused flags (with the time each pause began),
// the latest ended pause of each job, the pending run requests and the
// watchers. Guarded by Provider.mu.
type controlState struct {
	paused   map[string]time.Time
	ended    map[string]batontype.PauseSpan
	requests map[string]batontype.RunRequest
	watchers map[*waiter]struct{}
}

// SetPaused implements lockprovider.Control.
func (p *Provider) SetPaused(ctx context.Context, job string, paused bool) error {
	if err := check.Live(ctx, batontype.ValidateName(job)); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &p.control
	from, was := c.paused[job]
	switch {
	case paused && !was:
		if c.paused == nil {
			c.paused = make(map[string]time.Time)
		}
		c.paused[job] = p.now()
	case !paused && was:
		delete(c.paused, job)
		if c.ended == nil {
			c.ended = make(map[string]batontype.PauseSpan)
		}
		c.ended[job] = batontype.PauseSpan{Job: job, From: from, Until: p.now()}
	}
	p.announceControlLocked()
	return nil
}

// RequestRun implements lockprovider.Control.
func (p *Provider) RequestRun(ctx context.Context, r batontype.RunRequest) (batontype.RunRequest, error) {
	if err := check.Live(ctx, r.Validate()); err != nil {
		return batontype.RunRequest{}, err
	}
	r = r.WithDefaults()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r.Requested, r.Until = now, now.Add(r.TTL)
	c := &p.control
	if c.requests == nil {
		c.requests = make(map[string]batontype.RunRequest)
	}
	c.requests[r.ID] = r
	p.announceControlLocked()
	return r, nil
}

// ClaimRun implements lockprovider.Control.
func (p *Provider) ClaimRun(ctx context.Context, id string) (batontype.RunRequest, error) {
	if err := check.Live(ctx, batontype.ValidateRunRequestID(id)); err != nil {
		return batontype.RunRequest{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.control.requests[id]
	if !ok {
		return batontype.RunRequest{}, batontype.ErrNoRequest
	}
	delete(p.control.requests, id)
	if !p.now().Before(r.Until) {
		return batontype.RunRequest{}, batontype.ErrNoRequest
	}
	return r, nil
}

// ControlState implements lockprovider.Control.
func (p *Provider) ControlState(ctx context.Context) (batontype.ControlState, error) {
	if err := check.Live(ctx); err != nil {
		return batontype.ControlState{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &p.control
	now := p.now()
	st := batontype.ControlState{Paused: slices.Sorted(maps.Keys(c.paused))}
	for _, sp := range c.ended {
		st.Pauses = append(st.Pauses, sp)
	}
	for job, from := range c.paused {
		st.Pauses = append(st.Pauses, batontype.PauseSpan{Job: job, From: from})
	}
	batontype.SortPauses(st.Pauses)
	for id, r := range c.requests {
		if !now.Before(r.Until) {
			delete(c.requests, id)
			continue
		}
		st.Requests = append(st.Requests, r)
	}
	slices.SortFunc(st.Requests, func(a, b batontype.RunRequest) int { return a.Requested.Compare(b.Requested) })
	return st, nil
}

// WatchControl implements lockprovider.Control.
func (p *Provider) WatchControl(ctx context.Context, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	w := &waiter{ch: ch}
	p.mu.Lock()
	if p.control.watchers == nil {
		p.control.watchers = make(map[*waiter]struct{})
	}
	p.control.watchers[w] = struct{}{}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			delete(p.control.watchers, w)
			p.mu.Unlock()
		})
	}, nil
}

// announceControlLocked wakes the watchers. p.mu is held.
func (p *Provider) announceControlLocked() {
	for w := range p.control.watchers {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}
