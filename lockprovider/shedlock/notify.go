package shedlock

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/notify"
)

// DefaultPollInterval is how often a provider reads the state of the names
// some caller waits for (see NotifyRelease).
const DefaultPollInterval = 100 * time.Millisecond

// pollInterval returns the configured PollInterval d, or the default for
// zero, or a *batontype.ValidationError when d is out of range.
func pollInterval(d time.Duration) (time.Duration, error) {
	return defaults.Duration("PollInterval", d, DefaultPollInterval, time.Millisecond, time.Minute, "must be between 1ms and 1m")
}

// nameState is what the poller compares between two reads of a name.
type nameState struct {
	held  bool
	grant string // changes with every grant, Java's or Go's
}

// stateFunc reads the leases of names; a name missing from its answer is
// free.
type stateFunc func(ctx context.Context, names []string) ([]batontype.LeaseInfo, error)

// statesOf is what the poller compares of each lease. The token changes
// with every Go grant, even one released (and its record deleted) between
// two reads; locked_at and locked_by with Java's.
func statesOf(infos []batontype.LeaseInfo) map[string]nameState {
	m := make(map[string]nameState, len(infos))
	for _, i := range infos {
		m[i.Name] = nameState{held: i.Held, grant: strconv.FormatInt(i.Token, 10) + "\x00" + i.GrantedAt.String() + "\x00" + i.LockedBy}
	}
	return m
}

// poller implements lockprovider.ReleaseNotifier by reading the state of
// the awaited names every interval. Java replicas announce nothing, so a
// release notification in compatible mode can only come from looking: a
// name counts as released when it is free now and was held at the last
// read, or was granted and freed again in between.
type poller struct {
	interval time.Duration
	states   stateFunc
	log      *slog.Logger
	hub      notify.Hub // keyed by name

	// mu guards last, quit and done. The hub's hooks take it under the
	// hub's lock, so it is never held while calling the hub.
	mu   sync.Mutex
	last map[string]nameState // by name, while it has registrations
	quit chan struct{}        // nil while no goroutine runs
	done chan struct{}
}

func newPoller(interval time.Duration, states stateFunc, log *slog.Logger) *poller {
	return &poller{
		interval: interval, states: states, log: log,
		last: map[string]nameState{},
	}
}

// register reads name's state once (so a release right after register
// returns is seen) and arranges signals on ch.
func (p *poller) register(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	infos, err := p.states(ctx, []string{name})
	if err != nil {
		return nil, err
	}
	st := statesOf(infos)
	reg := p.hub.Add(name, ch, func(firstOfKey, _ bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if firstOfKey {
			p.last[name] = st[name]
		}
		if p.quit == nil {
			p.quit, p.done = make(chan struct{}), make(chan struct{})
			go p.run(p.quit, p.done)
		}
	})
	return p.hub.Stopper(reg, func(lastOfKey, last bool) func() { return p.removed(name, lastOfKey, last) }), nil
}

// removed forgets name with its last registration and stops the goroutine
// with the last of all, waiting for it once the hub's lock is released.
func (p *poller) removed(name string, lastOfKey, last bool) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if lastOfKey {
		delete(p.last, name)
	}
	if !last || p.quit == nil {
		return nil
	}
	quit, done := p.quit, p.done
	p.quit, p.done = nil, nil
	return func() {
		close(quit)
		<-done
	}
}

func (p *poller) run(quit, done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-quit
		cancel()
	}()
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		names := p.hub.Keys()
		rctx, rcancel := context.WithTimeout(ctx, 5*p.interval+time.Second)
		infos, err := p.states(rctx, names)
		rcancel()
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("shedlock: reading awaited locks failed", "err", err)
			}
			continue
		}
		st := statesOf(infos)
		var released []string
		p.mu.Lock()
		for _, n := range names {
			prev, ok := p.last[n]
			if !ok {
				continue
			}
			cur := st[n]
			p.last[n] = cur
			if cur.held || (!prev.held && prev.grant == cur.grant) {
				continue
			}
			released = append(released, n)
		}
		p.mu.Unlock()
		for _, n := range released {
			p.hub.Signal(n)
		}
	}
}
