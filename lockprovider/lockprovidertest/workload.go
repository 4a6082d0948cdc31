package lockprovidertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
)

// Workload is a concurrent randomized workload of lock cycles on a
// provider, recorded in a history for the checker (package history).
// Each client is a Locker of its own over the provider, as the replicas of
// an application are: it acquires (at once or waiting), sometimes extends,
// writes to an in-process fenced resource per name after Lock.Check, holds
// for a random time (sometimes past the lease), and releases or abandons the
// lock; between cycles it replays stale handles (releases and extensions
// with an earlier owner token), acquires with ticks, and, when the provider
// is a lockprovider.Admin, force-releases. Every choice comes from Seed, so
// a seed replays the same choices (the interleaving is the machine's). The
// zero Workload is usable.
type Workload struct {
	// Seed drives every random choice; zero means a random seed, which Run
	// reports through Seed's log line.
	Seed int64
	// Clients is the number of concurrent clients. Zero means 6.
	Clients int
	// Names are the lock names the clients contend for. Empty means two
	// names derived from the seed.
	Names []string
	// Duration bounds the run. Zero means 1.5s.
	Duration time.Duration
	// Leases are the lease lengths the clients draw from. Empty means
	// 40ms, 150ms and 600ms.
	Leases []time.Duration
	// FirstClient numbers the clients from this value in the history, so
	// several workloads (processes) can share one.
	FirstClient int
	// Resources are the fenced resources per name; nil makes one per name.
	// Several processes' workloads record their writes under the same
	// names, so the checker judges each resource's writes together only
	// when the resource itself is shared (an in-process Resource is not).
	Resources map[string]*fence.Resource
}

func (w *Workload) defaults() {
	if w.Seed == 0 {
		w.Seed = rand.Int64N(1<<53) + 1
	}
	if w.Clients <= 0 {
		w.Clients = 6
	}
	if len(w.Names) == 0 {
		w.Names = []string{fmt.Sprintf("hist-%d-a", w.Seed), fmt.Sprintf("hist-%d-b", w.Seed)}
	}
	if w.Duration <= 0 {
		w.Duration = 1500 * time.Millisecond
	}
	if len(w.Leases) == 0 {
		w.Leases = []time.Duration{40 * time.Millisecond, 150 * time.Millisecond, 600 * time.Millisecond}
	}
	if w.Resources == nil {
		w.Resources = make(map[string]*fence.Resource, len(w.Names))
	}
	for _, n := range w.Names {
		if w.Resources[n] == nil {
			w.Resources[n] = new(fence.Resource)
		}
	}
}

// Run runs the workload against p, recording into h, until w.Duration has
// passed or ctx is done, and returns the seed it used. It returns an error
// only when the workload could not run (a Locker could not be made); the
// provider's errors are part of the history.
func (w Workload) Run(ctx context.Context, h *history.History, p lockprovider.Provider) (int64, error) {
	w.defaults()
	h.Note("workload seed %d: %d clients on %d names for %v, leases %v", w.Seed, w.Clients, len(w.Names), w.Duration, w.Leases)
	ctx, cancel := context.WithTimeout(ctx, w.Duration)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, w.Clients)
	for i := range w.Clients {
		c := &client{w: &w, h: h, id: w.FirstClient + i, rng: rand.New(rand.NewPCG(uint64(w.Seed), uint64(i)))}
		c.p = h.Provider(p, c.id)
		l, err := baton.NewLocker(c.p, &baton.Config{LockedBy: fmt.Sprintf("workload-%d", c.id), MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
		if err != nil {
			return w.Seed, err
		}
		c.l = l
		wg.Go(func() { errs[i] = c.run(ctx) })
	}
	wg.Wait()
	return w.Seed, errors.Join(errs...)
}

type client struct {
	w   *Workload
	h   *history.History
	id  int
	rng *rand.Rand
	p   lockprovider.Provider // recorded
	l   *baton.Locker

	stale []staleHandle // earlier grants, for stale-handle replays
	tick  time.Time
}

type staleHandle struct{ name, owner string }

func (c *client) pick(ds []time.Duration) time.Duration { return ds[c.rng.IntN(len(ds))] }

func (c *client) run(ctx context.Context) error {
	for ctx.Err() == nil {
		name := c.w.Names[c.rng.IntN(len(c.w.Names))]
		switch r := c.rng.IntN(100); {
		case r < 70:
			c.cycle(ctx, name)
		case r < 83:
			c.replayStale(ctx)
		case r < 92:
			c.tickAcquire(ctx, name)
		case r < 96:
			c.inspect(ctx, name)
		default:
			c.forceRelease(ctx, name)
		}
	}
	return nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// cycle is one lock cycle through the Locker, recording the trusted
// windows it acted in.
func (c *client) cycle(ctx context.Context, name string) {
	lease := c.pick(c.w.Leases)
	opts := &baton.AcquireOptions{AtMostFor: lease}
	if c.rng.IntN(3) == 0 {
		opts.AtLeastFor = time.Duration(c.rng.Int64N(int64(lease)))
	}
	var lock *baton.Lock
	var err error
	if c.rng.IntN(4) == 0 {
		wctx, cancel := context.WithTimeout(ctx, 2*lease)
		lock, err = c.l.Acquire(wctx, name, opts)
		cancel()
	} else {
		lock, err = c.l.TryAcquire(ctx, name, opts)
	}
	if err != nil {
		return
	}
	from := time.Now()
	until := lock.TrustedUntil()
	owner, token := lock.Lease().Owner, lock.Token()
	c.remember(name, owner)
	var windows [][2]time.Time
	closeWindow := func(at time.Time) {
		// An Extend of unknown outcome may have cut the window short.
		windows = append(windows, [2]time.Time{from, minTime(minTime(until, lock.TrustedUntil()), at)})
	}
	write := func() {
		call := time.Now()
		if lock.Check() != nil {
			return
		}
		err := c.w.Resources[name].DoContext(lock.Context(), token, nil)
		switch {
		case err == nil:
			c.h.Fenced(c.id, name, token, true, call, time.Now())
		case errors.Is(err, fence.ErrStaleToken):
			c.h.Fenced(c.id, name, token, false, call, time.Now())
		}
	}
	write()
	for steps := c.rng.IntN(4); steps > 0 && ctx.Err() == nil; steps-- {
		switch c.rng.IntN(3) {
		case 0:
			d := c.pick(c.w.Leases)
			if err := lock.Extend(ctx, d); err == nil {
				now := time.Now()
				closeWindow(now)
				from, until = now, lock.TrustedUntil()
			}
		case 1:
			write()
		default:
			// Hold; now and then past the lease, as a paused holder would.
			hold := time.Duration(c.rng.Int64N(int64(lease) / 2))
			if c.rng.IntN(8) == 0 {
				hold = lease + lease/4
			}
			sleep(ctx, hold)
		}
	}
	if c.rng.IntN(10) == 0 {
		closeWindow(time.Now())
		c.record(name, owner, token, windows)
		return // abandoned: the lease lapses
	}
	closeWindow(time.Now())
	_ = lock.Release(context.WithoutCancel(ctx))
	c.record(name, owner, token, windows)
}

func (c *client) record(name, owner string, token int64, windows [][2]time.Time) {
	for _, w := range windows {
		c.h.Window(c.id, name, owner, token, w[0], w[1])
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (c *client) remember(name, owner string) {
	c.stale = append(c.stale, staleHandle{name, owner})
	if len(c.stale) > 8 {
		c.stale = c.stale[1:]
	}
}

// replayStale sends a release or extension with an earlier grant's owner
// token, as a handle kept past its lock would.
func (c *client) replayStale(ctx context.Context) {
	if len(c.stale) == 0 {
		return
	}
	s := c.stale[c.rng.IntN(len(c.stale))]
	if c.rng.IntN(2) == 0 {
		_ = c.p.Release(ctx, lockprovider.ReleaseParams{Name: s.name, Owner: s.owner})
		return
	}
	// The bound asked for is the whole lease, so a replay that lands on a
	// lease still kept by its minimum hold never moves the bound earlier
	// (which the checker reports as the caller's fault).
	d := c.pick(c.w.Leases)
	_, _ = c.p.Extend(ctx, lockprovider.ExtendParams{Name: s.name, Owner: s.owner, AtMostFor: d, AtLeastFor: d})
}

// tickAcquire acquires with a tick, as a scheduler does, holds briefly and
// releases; ticks repeat now and then, as replicas firing the same tick do.
func (c *client) tickAcquire(ctx context.Context, name string) {
	lease := c.pick(c.w.Leases)
	tick := time.Now().Truncate(lease / 4)
	if c.rng.IntN(3) == 0 && !c.tick.IsZero() {
		tick = c.tick // a replica firing late
	}
	c.tick = tick
	owner := lockprovider.NewOwner()
	_, err := c.p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, LockedBy: "workload", AtMostFor: lease, Tick: tick})
	if err != nil {
		return
	}
	c.remember(name, owner)
	sleep(ctx, time.Duration(c.rng.Int64N(int64(lease)/4)))
	_ = c.p.Release(context.WithoutCancel(ctx), lockprovider.ReleaseParams{Name: name, Owner: owner})
}

// inspect reads name's state through the recorded provider, when the
// provider is a lockprovider.Inspector.
func (c *client) inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	in, ok := c.p.(history.Inspector)
	if !ok {
		return batontype.LeaseInfo{}, errors.ErrUnsupported
	}
	return in.Inspect(ctx, name)
}

// forceRelease frees name as an operator would, by token when the name's
// lease can be inspected.
func (c *client) forceRelease(ctx context.Context, name string) {
	f, ok := c.p.(history.ForceReleaser)
	if !ok {
		return
	}
	var token int64
	if c.rng.IntN(2) == 0 {
		if info, err := c.inspect(ctx, name); err == nil && info.Held {
			token = info.Token
		}
	}
	_, _ = f.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: name, Token: token, By: "workload"})
}
