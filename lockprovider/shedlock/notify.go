package shedlock

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
)

// DefaultPollInterval is how often a provider reads the state of the names
// some caller waits for (see NotifyRelease).
const DefaultPollInterval = 100 * time.Millisecond

// pollInterval returns the configured PollInterval d, or the default for
// zero, or a *batontype.ValidationError when d is out of range.
func pollInterval(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultPollInterval, nil
	case d < time.Millisecond || d > time.Minute:
		return 0, &batontype.ValidationError{Field: "PollInterval", Value: d.String(), Reason: "must be between 1ms and 1m", Err: batontype.ErrInvalidDuration}
	}
	return d, nil
}

// nameState is what the poller compares between two reads of a name.
type nameState struct {
	held  bool
	grant string // changes with every grant, Java's or Go's
}

type stateFunc func(ctx context.Context, names []string) (map[string]nameState, error)

// poller implements lockprovider.ReleaseNotifier by reading the state of
// the awaited names every interval. Java replicas announce nothing, so a
// release notification in compatible mode can only come from looking: a
// name counts as released when it is free now and was held at the last
// read, or was granted and freed again in between.
type poller struct {
	interval time.Duration
	states   stateFunc
	log      *slog.Logger

	mu   sync.Mutex
	regs map[string]map[*chan<- struct{}]struct{}
	last map[string]nameState
	quit chan struct{} // nil while no goroutine runs
	done chan struct{}
}

func newPoller(interval time.Duration, states stateFunc, log *slog.Logger) *poller {
	return &poller{
		interval: interval, states: states, log: log,
		regs: map[string]map[*chan<- struct{}]struct{}{},
		last: map[string]nameState{},
	}
}

// register reads name's state once (so a release right after register
// returns is seen) and arranges signals on ch.
func (p *poller) register(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	st, err := p.states(ctx, []string{name})
	if err != nil {
		return nil, err
	}
	key := &ch
	p.mu.Lock()
	if p.regs[name] == nil {
		p.regs[name] = map[*chan<- struct{}]struct{}{}
		p.last[name] = st[name]
	}
	p.regs[name][key] = struct{}{}
	if p.quit == nil {
		p.quit, p.done = make(chan struct{}), make(chan struct{})
		go p.run(p.quit, p.done)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { p.unregister(name, key) }) }, nil
}

func (p *poller) unregister(name string, key *chan<- struct{}) {
	p.mu.Lock()
	delete(p.regs[name], key)
	if len(p.regs[name]) == 0 {
		delete(p.regs, name)
		delete(p.last, name)
	}
	if len(p.regs) > 0 || p.quit == nil {
		p.mu.Unlock()
		return
	}
	quit, done := p.quit, p.done
	p.quit, p.done = nil, nil
	p.mu.Unlock()
	close(quit)
	<-done
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
		p.mu.Lock()
		names := make([]string, 0, len(p.regs))
		for n := range p.regs {
			names = append(names, n)
		}
		p.mu.Unlock()
		rctx, rcancel := context.WithTimeout(ctx, 5*p.interval+time.Second)
		st, err := p.states(rctx, names)
		rcancel()
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("shedlock: reading awaited locks failed", "err", err)
			}
			continue
		}
		p.mu.Lock()
		for _, n := range names {
			regs, ok := p.regs[n]
			if !ok {
				continue
			}
			prev, cur := p.last[n], st[n]
			p.last[n] = cur
			if cur.held || (!prev.held && prev.grant == cur.grant) {
				continue
			}
			for ch := range regs {
				select {
				case *ch <- struct{}{}:
				default:
				}
			}
		}
		p.mu.Unlock()
	}
}
