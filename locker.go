package baton

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
)

// Defaults applied for zero Config fields.
const (
	DefaultAtMostFor      = 30 * time.Second
	DefaultMinBackoff     = 5 * time.Millisecond
	DefaultMaxBackoff     = 500 * time.Millisecond
	DefaultReleaseTimeout = 5 * time.Second
)

// Config configures a Locker. The zero value (or a nil *Config) means the
// documented defaults.
type Config struct {
	// Logger receives debug records for waits and warnings for renewal
	// failures and lost locks. Nil discards them.
	Logger *slog.Logger

	// LockedBy identifies this process to operators (it is stored with
	// each lease, informational only). Empty means "hostname/pid", the
	// scheduler's default too.
	LockedBy string

	// AtMostFor is the lease length (lockAtMostFor) used when AcquireOptions.AtMostFor
	// is zero. Zero means DefaultTTL.
	AtMostFor time.Duration

	// SafetyMargin is subtracted from every lease when computing the local
	// trust window (see the package documentation). Zero means 1% of the
	// lease, an allowance for the local clock running at a slightly
	// different rate from the backend's, plus 20 ms (a quarter of the
	// lease if that is less), an allowance for timers that fire late
	// under load.
	SafetyMargin time.Duration

	// MinBackoff and MaxBackoff bound the jittered exponential backoff
	// between polls while Acquire waits. Zero means DefaultMinBackoff and
	// DefaultMaxBackoff (or MinBackoff, if that is larger).
	MinBackoff, MaxBackoff time.Duration

	// ReleaseTimeout bounds Release, which ignores the cancellation of the
	// context it is given so that it works during shutdown. Zero means
	// DefaultReleaseTimeout.
	ReleaseTimeout time.Duration

	// DisableNotify makes Acquire poll only, even when the provider
	// implements lockprovider.ReleaseNotifier.
	DisableNotify bool
}

// AcquireOptions are per-call options. A nil *AcquireOptions means the
// Locker's defaults.
type AcquireOptions struct {
	// AtMostFor is the lease length (lockAtMostFor). Zero means Config.AtMostFor.
	AtMostFor time.Duration
	// AtLeastFor keeps the lock held until this long after the grant even
	// when it is released earlier (lockAtLeastFor). 0 <= AtLeastFor <= TTL.
	AtLeastFor time.Duration
	// AutoRenew starts a watchdog goroutine, owned by the Lock, that
	// extends the lease by TTL every TTL/3 until Release or loss.
	AutoRenew bool
	// LockedBy overrides Config.LockedBy for this lock.
	LockedBy string
}

// Locker hands out locks from one provider. It holds no goroutines and
// needs no closing; it is safe for concurrent use.
type Locker struct {
	p        lockprovider.Provider
	notifier lockprovider.ReleaseNotifier // nil when polling only
	log      *slog.Logger

	lockedBy       string
	ttl            time.Duration
	margin         time.Duration // 0: proportional default
	minBackoff     time.Duration
	maxBackoff     time.Duration
	releaseTimeout time.Duration

	rtt          atomic.Int64 // moving average of provider round trips, ns
	notifyWarned atomic.Bool

	mu    sync.Mutex
	gates map[string]*gate // waiters per name, see enter
}

// gate lets one Acquire per name and Locker talk to the provider at a time;
// the others queue behind it in-process. A release then wakes one attempt
// per process instead of one per waiting goroutine, which would crowd the
// backend (and the connection pool the release itself needs).
type gate struct {
	turn chan struct{} // holds a token while a waiter is active

	// Guarded by Locker.mu.
	n    int           // waiters, active or queued
	wake chan struct{} // release notifications for name, or nil
	stop func()        // ends the registration; called by the last waiter
}

// NewLocker returns a Locker on p. A nil cfg means the defaults. It returns
// ErrNilProvider for a nil p and a *ValidationError for a bad cfg.
func NewLocker(p lockprovider.Provider, cfg *Config) (*Locker, error) {
	if p == nil {
		return nil, ErrNilProvider
	}
	var c Config
	if cfg != nil {
		c = *cfg
	}
	l := &Locker{
		p:              p,
		log:            c.Logger,
		lockedBy:       c.LockedBy,
		ttl:            c.AtMostFor,
		margin:         c.SafetyMargin,
		minBackoff:     c.MinBackoff,
		maxBackoff:     c.MaxBackoff,
		releaseTimeout: c.ReleaseTimeout,
		gates:          make(map[string]*gate),
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if n, ok := p.(lockprovider.ReleaseNotifier); ok && !c.DisableNotify {
		l.notifier = n
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"TTL", c.AtMostFor}, {"SafetyMargin", c.SafetyMargin}, {"MinBackoff", c.MinBackoff},
		{"MaxBackoff", c.MaxBackoff}, {"ReleaseTimeout", c.ReleaseTimeout},
	} {
		if d.v < 0 {
			return nil, invalid("Config."+d.field, d.v.String(), "must not be negative", ErrInvalidDuration)
		}
	}
	if l.ttl == 0 {
		l.ttl = DefaultAtMostFor
	}
	if err := lockprovider.ValidateDurations(l.ttl, 0); err != nil {
		return nil, err
	}
	if l.minBackoff == 0 {
		l.minBackoff = DefaultMinBackoff
	}
	if l.maxBackoff == 0 {
		l.maxBackoff = max(DefaultMaxBackoff, l.minBackoff)
	}
	if l.minBackoff > l.maxBackoff {
		return nil, invalid("Config.MinBackoff", l.minBackoff.String(), "must not exceed MaxBackoff "+l.maxBackoff.String(), ErrInvalidDuration)
	}
	if l.releaseTimeout == 0 {
		l.releaseTimeout = DefaultReleaseTimeout
	}
	if l.lockedBy == "" {
		l.lockedBy = lease.LockedBy()
	} else if err := (lockprovider.AcquireParams{Name: "x", Owner: "x", LockedBy: l.lockedBy, AtMostFor: time.Second}).Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

func invalid(field, value, reason string, sentinel error) error {
	return &ValidationError{Field: field, Value: strconv.Quote(value), Reason: reason, Err: sentinel}
}

// request is a validated acquisition.
type request struct {
	params    lockprovider.AcquireParams
	margin    time.Duration
	autoRenew bool
}

func (l *Locker) request(name string, o *AcquireOptions) (request, error) {
	var opts AcquireOptions
	if o != nil {
		opts = *o
	}
	if opts.AtMostFor < 0 {
		return request{}, invalid("TTL", opts.AtMostFor.String(), "must not be negative (zero means the default)", ErrInvalidDuration)
	}
	ttl := opts.AtMostFor
	if ttl == 0 {
		ttl = l.ttl
	}
	by := opts.LockedBy
	if by == "" {
		by = l.lockedBy
	}
	r := request{
		params: lockprovider.AcquireParams{
			Name:       name,
			Owner:      lockprovider.NewOwner(),
			LockedBy:   by,
			AtMostFor:  ttl,
			AtLeastFor: opts.AtLeastFor,
		},
		autoRenew: opts.AutoRenew,
	}
	if err := r.params.Validate(); err != nil {
		return request{}, err
	}
	r.margin = l.marginFor(ttl)
	if r.margin >= ttl {
		return request{}, invalid("TTL", ttl.String(), "must exceed the trust window's safety margin "+r.margin.String(), ErrInvalidDuration)
	}
	return r, nil
}

// marginFor is the safety margin subtracted from a lease of length d.
func (l *Locker) marginFor(d time.Duration) time.Duration {
	if l.margin > 0 {
		return l.margin
	}
	return lease.Margin(d)
}

// TryAcquire makes one attempt to acquire name and returns ErrNotAcquired at
// once if another owner holds it. On an error of unknown outcome it releases
// whatever the attempt may have granted (best effort, bounded by
// Config.ReleaseTimeout) and returns the error.
func (l *Locker) TryAcquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	if l == nil || l.p == nil {
		return nil, ErrNilProvider
	}
	r, err := l.request(name, opts)
	if err != nil {
		return nil, err
	}
	lock, err := l.attempt(ctx, r, time.Now())
	if err != nil && !definite(err) {
		l.abandon(ctx, r)
	}
	return lock, err
}

// Acquire waits until it acquires name or ctx is done. It tries at once,
// then again whenever the provider announces a release of name (if it
// implements lockprovider.ReleaseNotifier and Config.DisableNotify is
// false) and otherwise after a jittered exponential backoff between
// Config.MinBackoff and Config.MaxBackoff, since expiry is not announced.
//
// Goroutines waiting through one Locker for the same name queue in this
// process, in arrival order as far as Go's channels keep it: only the first
// polls and tries, so a release costs the backend one attempt per process,
// not one per waiting goroutine. Waiters in other processes compete freely.
//
// Acquire fails early with ErrDeadlineTooSoon (which also matches
// ErrNotAcquired) when ctx's deadline leaves less time than one round trip
// to the provider, as measured on this Locker. It does not know when the
// current holder will release, so it otherwise waits until the deadline.
// When ctx is done it returns an error matching ErrNotAcquired and ctx's
// error. Errors of unknown outcome are retried with the same owner token,
// which is idempotent; if Acquire gives up after one, it releases what the
// attempt may have granted.
func (l *Locker) Acquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	if l == nil || l.p == nil {
		return nil, ErrNilProvider
	}
	r, err := l.request(name, opts)
	if err != nil {
		return nil, err
	}
	if err := l.deadlineOK(ctx, 0); err != nil {
		return nil, fmt.Errorf("baton: acquire %q: %w", name, err)
	}
	wake, leave, err := l.enter(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("baton: acquire %q: %w", name, err)
	}
	defer leave()

	var (
		backoff = l.minBackoff
		anchor  time.Time // first send since the last definite answer
		unknown error     // the last error of unknown outcome
		last    bool      // the attempt just made was the last before the deadline
		timer   *time.Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := time.Now()
		if anchor.IsZero() {
			anchor = now
		}
		lock, err := l.attempt(ctx, r, anchor)
		switch {
		case err == nil:
			return lock, nil
		case errors.Is(err, lockprovider.ErrNotAcquired):
			unknown, anchor = nil, time.Time{}
		case errors.Is(err, errLateGrant):
			// Released already; a fresh owner token keeps a grant that
			// the release may have missed from being returned again
			// with a trust window anchored too late.
			r.params.Owner = lockprovider.NewOwner()
			unknown, anchor = err, time.Time{}
		case definite(err):
			return nil, err
		default:
			unknown = err
			l.log.DebugContext(ctx, "baton: acquire failed; retrying", "lock_name", name, "err", err)
		}

		sleep := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, l.maxBackoff)
		if err := l.deadlineOK(ctx, sleep); err != nil {
			// The deadline falls before the next poll: try once more
			// just before it, or give up if even that is too late.
			dl, _ := ctx.Deadline()
			sleep = time.Until(dl) - time.Duration(l.rtt.Load())
			if last || sleep <= 0 || ctx.Err() != nil {
				return nil, l.giveUp(ctx, r, unknown, err)
			}
			last = true
		}
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-wake:
			last = false // woken early: the final try is still ahead
		case <-timer.C:
		case <-ctx.Done():
			return nil, l.giveUp(ctx, r, unknown, fmt.Errorf("%w: %w", ErrNotAcquired, context.Cause(ctx)))
		}
	}
}

// enter waits for this goroutine's turn to acquire name through l.
func (l *Locker) enter(ctx context.Context, name string) (wake <-chan struct{}, leave func(), err error) {
	l.mu.Lock()
	g := l.gates[name]
	if g == nil {
		g = &gate{turn: make(chan struct{}, 1)}
		l.gates[name] = g
	}
	g.n++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		g.n--
		var stop func()
		if g.n == 0 {
			delete(l.gates, name)
			stop, g.stop = g.stop, nil
		}
		l.mu.Unlock()
		if stop != nil {
			stop()
		}
	}
	select {
	case g.turn <- struct{}{}:
	case <-ctx.Done():
		done()
		return nil, nil, fmt.Errorf("%w: %w", ErrNotAcquired, context.Cause(ctx))
	}
	leave = func() { <-g.turn; done() }
	if l.notifier == nil {
		return nil, leave, nil
	}
	// Register before the first attempt: a release between a failed
	// attempt and the registration would go unseen. The registration
	// stays with the gate while waiters remain, for the next in turn.
	l.mu.Lock()
	wake = g.wake
	l.mu.Unlock()
	if wake != nil {
		return wake, leave, nil
	}
	ch := make(chan struct{}, 1)
	stop, err := l.notifier.NotifyRelease(ctx, name, ch)
	if err != nil {
		if ctx.Err() == nil {
			// A configuration problem repeats on every wait: say it once.
			level := slog.LevelDebug
			if l.notifyWarned.CompareAndSwap(false, true) {
				level = slog.LevelWarn
			}
			l.log.Log(ctx, level, "baton: release notifications unavailable; polling", "lock_name", name, "err", err)
		}
		return nil, leave, nil
	}
	l.mu.Lock()
	g.wake, g.stop = ch, stop
	l.mu.Unlock()
	return ch, leave, nil
}

// deadlineOK reports whether ctx leaves time for one round trip after
// waiting for wait.
func (l *Locker) deadlineOK(ctx context.Context, wait time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotAcquired, context.Cause(ctx))
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	if left := time.Until(dl) - wait; left <= 0 || left < time.Duration(l.rtt.Load()) {
		return fmt.Errorf("%w: %w: %v left, round trip about %v", ErrDeadlineTooSoon, ErrNotAcquired,
			time.Until(dl).Round(time.Microsecond), time.Duration(l.rtt.Load()).Round(time.Microsecond))
	}
	return nil
}

func (l *Locker) giveUp(ctx context.Context, r request, unknown, err error) error {
	if unknown != nil {
		l.abandon(ctx, r)
		err = fmt.Errorf("%w (last provider error: %w)", err, unknown)
	}
	return fmt.Errorf("baton: acquire %q: %w", r.params.Name, err)
}

// abandon releases whatever an attempt of unknown outcome may have granted,
// so that a failed acquire never leaves the caller holding a lock silently.
func (l *Locker) abandon(ctx context.Context, r request) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.releaseTimeout)
	defer cancel()
	err := l.p.Release(ctx, lockprovider.ReleaseParams{Name: r.params.Name, Owner: r.params.Owner})
	if err != nil && !errors.Is(err, lockprovider.ErrNotHeld) {
		l.log.WarnContext(ctx, "baton: release after failed acquire", "lock_name", r.params.Name, "err", err)
	}
}

// attempt makes one acquire call. anchor is the local time of the first
// request that may have produced the grant; the trust window starts there.
func (l *Locker) attempt(ctx context.Context, r request, anchor time.Time) (*Lock, error) {
	start := time.Now()
	grant, err := l.p.Acquire(ctx, r.params)
	l.observe(time.Since(start))
	if err != nil {
		if definite(err) {
			return nil, err
		}
		return nil, fmt.Errorf("baton: acquire %q: %w", r.params.Name, err)
	}
	k := newLock(ctx, l, r, grant, anchor)
	if k.Check() != nil {
		// The grant came back after its trust window had ended (a very
		// slow round trip or a pause): it cannot be trusted.
		_ = k.Release(ctx)
		return nil, fmt.Errorf("baton: acquire %q: %w", r.params.Name, errLateGrant)
	}
	return k, nil
}

// observe folds one round trip into the moving average (weight 1/8).
func (l *Locker) observe(d time.Duration) {
	for {
		old := l.rtt.Load()
		nv := int64(d)
		if old != 0 {
			nv = old + (int64(d)-old)/8
		}
		if l.rtt.CompareAndSwap(old, nv) {
			return
		}
	}
}
