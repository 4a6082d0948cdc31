package baton

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/isnil"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Defaults applied for zero Config fields.
const (
	DefaultAtMostFor      = 30 * time.Second
	DefaultMinBackoff     = 5 * time.Millisecond
	DefaultMaxBackoff     = 500 * time.Millisecond
	DefaultReleaseTimeout = 5 * time.Second
	DefaultCallTimeout    = 5 * time.Second
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
	// is zero. Zero means DefaultAtMostFor.
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

	// CallTimeout bounds each provider call that TryAcquire and Acquire
	// make, when their context has no earlier deadline: some clients wait
	// on a connection that stopped answering for as long as the context
	// allows, which for context.Background is forever. A call cut short
	// by it reports an error matching ErrUnavailable. Zero means
	// DefaultCallTimeout.
	//
	// TryAcquire and Acquire therefore return by ctx's deadline, or
	// CallTimeout after their last call when ctx has none, plus, after an
	// attempt of unknown outcome, one best-effort release that waits at
	// most four estimated round trips (at least 100 ms).
	CallTimeout time.Duration

	// DisableNotify makes Acquire poll only, even when the provider
	// implements lockprovider.ReleaseNotifier. Default false: a waiting
	// Acquire is woken by the provider's release notifications when it
	// has them, and polls otherwise.
	DisableNotify bool

	// Observer receives the Locker's events (package observe: attempts,
	// grants with their wait and token, refusals, extensions, losses and
	// releases). Nil means none, at no cost.
	Observer observe.Observer
}

// AcquireOptions are per-call options. A nil *AcquireOptions means the
// Locker's defaults.
type AcquireOptions struct {
	// AtMostFor is the lease length (lockAtMostFor). Zero means Config.AtMostFor.
	AtMostFor time.Duration
	// AtLeastFor keeps the lock held until this long after the grant even
	// when it is released earlier (lockAtLeastFor). 0 <= AtLeastFor <= TTL.
	// Zero means none: Release frees the lock at once.
	AtLeastFor time.Duration
	// AutoRenew starts a watchdog goroutine, owned by the Lock, that
	// extends the lease by AtMostFor a third of AtMostFor after each
	// renewal was sent, until Release or loss (see the package
	// documentation). Default false: the lease is extended only by
	// Lock.Extend.
	AutoRenew bool
	// LockedBy overrides Config.LockedBy for this lock. Empty means
	// Config.LockedBy.
	LockedBy string
}

// Locker hands out locks from one provider. It holds no goroutines and
// needs no closing; it is safe for concurrent use.
type Locker struct {
	p        lockprovider.Provider
	notifier lockprovider.ReleaseNotifier // nil when polling only
	log      *slog.Logger
	obs      observe.Observer // nil: no events

	lockedBy       string
	ttl            time.Duration
	margin         time.Duration // 0: proportional default
	minBackoff     time.Duration
	maxBackoff     time.Duration
	releaseTimeout time.Duration
	callTimeout    time.Duration

	rtt          atomic.Int64 // estimate of provider round trips, ns; see observe
	notifyWarned atomic.Bool

	mu    sync.Mutex
	gates map[string]*gate // waiters per name, see enter

	leases atomic.Pointer[lease.Policy] // shared by the locks; see leasePolicy
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
	held bool          // the latest answered attempt was "held by another owner"
}

// NewLocker returns a Locker on p. A nil cfg means the defaults. It returns
// ErrNilProvider for a nil p (a typed nil pointer included) and a
// *ValidationError for a bad cfg.
func NewLocker(p lockprovider.Provider, cfg *Config) (*Locker, error) {
	if isnil.IsNil(p) {
		return nil, ErrNilProvider
	}
	c := defaults.Of(cfg)
	l := &Locker{
		p:              p,
		log:            c.Logger,
		obs:            observe.Join(c.Observer),
		lockedBy:       c.LockedBy,
		ttl:            c.AtMostFor,
		margin:         c.SafetyMargin,
		minBackoff:     c.MinBackoff,
		maxBackoff:     c.MaxBackoff,
		releaseTimeout: c.ReleaseTimeout,
		callTimeout:    c.CallTimeout,
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
		{"AtMostFor", c.AtMostFor}, {"SafetyMargin", c.SafetyMargin}, {"MinBackoff", c.MinBackoff},
		{"MaxBackoff", c.MaxBackoff}, {"ReleaseTimeout", c.ReleaseTimeout}, {"CallTimeout", c.CallTimeout},
	} {
		if d.v < 0 {
			return nil, invalid("Config."+d.field, d.v.String(), "must not be negative", ErrInvalidDuration)
		}
	}
	if l.ttl == 0 {
		l.ttl = DefaultAtMostFor
	}
	if err := batontype.ValidateDurations(l.ttl, 0); err != nil {
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
	if l.callTimeout == 0 {
		l.callTimeout = DefaultCallTimeout
	}
	if l.lockedBy == "" {
		l.lockedBy = lease.LockedBy()
	} else if err := (lockprovider.AcquireParams{Name: "x", Owner: "x", LockedBy: l.lockedBy, AtMostFor: time.Second}).Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// check rejects a nil or zero Locker and a nil ctx.
func (l *Locker) check(ctx context.Context) error {
	if l == nil || l.p == nil {
		return ErrNilProvider
	}
	if ctx == nil {
		return ErrNilContext
	}
	return nil
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
		return request{}, invalid("AtMostFor", opts.AtMostFor.String(), "must not be negative (zero means the default)", ErrInvalidDuration)
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
		return request{}, invalid("AtMostFor", ttl.String(), "must exceed the trust window's safety margin "+r.margin.String(), ErrInvalidDuration)
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

// TryAcquire makes one attempt to acquire name. It returns an error
// matching ErrNotAcquired when the backend answered that another owner holds
// it, and one matching ErrUnavailable when the backend could not be reached
// or did not answer within Config.CallTimeout (or ctx's earlier deadline).
// On an error of unknown outcome it releases whatever the attempt may have
// granted (best effort, briefly: see Config.CallTimeout) and returns the
// error. A nil ctx is an error
// (ErrNilContext), not a panic. A ctx that carries a lock on name from l
// makes it a nested hold, as for Acquire.
func (l *Locker) TryAcquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	return l.reported(ctx, name, opts, (*Locker).tryAcquire)
}

func (l *Locker) tryAcquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	if err := l.check(ctx); err != nil {
		return nil, err
	}
	r, err := l.request(name, opts)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil { // nothing sent, nothing to release
		return nil, acquireErr(name, ctxErr(ctx))
	}
	if k, err := l.reenter(ctx, name); k != nil || err != nil {
		return k, err
	}
	lock, err := l.try(ctx, r, time.Now())
	if err != nil {
		if !definite(err) {
			l.abandon(ctx, r)
		}
		return nil, acquireErr(name, err)
	}
	return lock, nil
}

// Acquire waits until it acquires name or ctx is done. It tries at once,
// then again whenever the provider announces a release of name (if it
// implements lockprovider.ReleaseNotifier and Config.DisableNotify is
// false) and otherwise after a jittered exponential backoff between
// Config.MinBackoff and Config.MaxBackoff, since expiry is not announced.
// It always makes its first attempt, however close ctx's deadline.
//
// Goroutines waiting through one Locker for the same name queue in this
// process, in arrival order as far as Go's channels keep it: only the first
// polls and tries, so a release costs the backend one attempt per process,
// not one per waiting goroutine. Waiters in other processes compete freely.
//
// When ctx is done it returns an error matching ctx's error and cause.
// When the next attempt would come too late for ctx's deadline (less than
// one round trip to the provider left, as measured on this Locker), it
// gives up early with ErrDeadlineTooSoon, which matches
// context.DeadlineExceeded. Either error also matches the result of the
// latest attempt (not counting one that ended with ctx without an answer
// from the backend, unless it was the only one): ErrNotAcquired only if the
// backend answered that another owner holds the lock, ErrUnavailable if it
// could not be reached. It never matches ErrNotAcquired unless a backend
// said so.
//
// Unavailability and errors of unknown outcome are retried (with the same
// owner token, which is idempotent) until ctx is done; if Acquire gives up
// after one of unknown outcome, it releases what the attempt may have
// granted.
//
// Reentrancy: when ctx carries a lock on name acquired through l (ctx is
// that lock's Context, derives from it, or came from WithLock), Acquire and
// TryAcquire return at once a nested hold of it instead of contending with
// it: a *Lock with the same lease and token, whose Context ends when the
// outer lock's does, whose Release ends only the nested hold (idempotently;
// the outer lock's Release ends the lease and every nested hold), and on
// which the options of this call do not apply. When that lock has been
// lost or released, they return an error matching its end (ErrLockLost or
// ErrReleased) instead. Any other context contends normally.
func (l *Locker) Acquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	return l.reported(ctx, name, opts, (*Locker).acquire)
}

func (l *Locker) acquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	if err := l.check(ctx); err != nil {
		return nil, err
	}
	r, err := l.request(name, opts)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, acquireErr(name, ctxErr(ctx))
	}
	if k, err := l.reenter(ctx, name); k != nil || err != nil {
		return k, err
	}
	g, wake, leave, err := l.enter(ctx, name)
	if err != nil {
		return nil, err
	}
	defer leave()

	var (
		backoff = l.minBackoff
		anchor  time.Time // first send since the last definite answer
		last    error     // the latest attempt's error
		mayHold bool      // an attempt of unknown outcome may have granted r
		final   bool      // the attempt just made was the last before the deadline
		timer   *time.Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if anchor.IsZero() {
			anchor = time.Now()
		}
		lock, err := l.try(ctx, r, anchor)
		switch {
		case err == nil:
			return lock, nil
		case errors.Is(err, batontype.ErrNotAcquired):
			// A repeat of an earlier request with this owner would have
			// returned its grant: none of them holds the lock now. But an
			// earlier attempt of unknown outcome may still take effect (a
			// request held by the network, a transaction still open),
			// with a lease counted from its own send; a later repeat with
			// this owner would return that grant under a trust window
			// anchored after the refusal, too late. A fresh owner token
			// keeps such a grant from being taken for a later one; it is
			// released here if it is already in force, else it lapses.
			if mayHold {
				l.abandon(ctx, r)
				r.params.Owner = lockprovider.NewOwner()
			}
			mayHold, anchor = false, time.Time{}
		case errors.Is(err, errLateGrant):
			// Released already; a fresh owner token keeps a grant that
			// the release may have missed from being returned again
			// with a trust window anchored too late.
			r.params.Owner = lockprovider.NewOwner()
			mayHold, anchor = false, time.Time{}
		case batontype.NotSent(err):
			// Nothing reached the backend; an outage may be brief.
			l.log.DebugContext(ctx, "baton: backend unavailable; retrying", "lock_name", name, "err", err)
		case definite(err):
			return nil, acquireErr(name, err)
		default:
			mayHold = true
			l.log.DebugContext(ctx, "baton: acquire failed; retrying", "lock_name", name, "err", err)
		}
		if ctx.Err() == nil || last == nil || definite(err) && !batontype.NotSent(err) {
			// An attempt that ended with ctx and got no answer from the
			// backend (sent or not) says less than the one before.
			last = err
		}
		// For the queued waiters, by the rule of last: an attempt that
		// ctx cut short does not undo the backend's "held".
		l.mu.Lock()
		g.held = errors.Is(last, batontype.ErrNotAcquired)
		l.mu.Unlock()
		if ctx.Err() != nil {
			return nil, l.giveUp(ctx, r, mayHold, last, ctxErr(ctx))
		}

		sleep := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, l.maxBackoff)
		if dl, ok := ctx.Deadline(); ok {
			left, rtt := time.Until(dl), l.estimate()
			if left-sleep < rtt {
				// The deadline falls before the next poll could be
				// answered: try once more just before it, or give up
				// if that was the try or even it is too late.
				sleep = left - rtt
				if left <= 0 {
					// Passed already; ctx may not have noticed yet.
					return nil, l.giveUp(ctx, r, mayHold, last, context.DeadlineExceeded)
				}
				if final || sleep <= 0 {
					reason := fmt.Errorf("%w (%v left, round trip about %v)", ErrDeadlineTooSoon,
						left.Round(time.Microsecond), rtt.Round(time.Microsecond))
					return nil, l.giveUp(ctx, r, mayHold, last, reason)
				}
				final = true
			}
		}
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-wake:
			final = false // woken early: the final try is still ahead
		case <-timer.C:
		case <-ctx.Done():
			return nil, l.giveUp(ctx, r, mayHold, last, ctxErr(ctx))
		}
	}
}

// try makes one acquire call bounded by the call timeout.
//
// Providers report unavailability themselves, and only they can tell a
// request that was never sent. For one that does not, try labels what is
// plainly an outage as an unavailability of unknown outcome (never "not
// sent", since a client may have sent the request before failing): a call
// that a deadline (the call timeout's or ctx's) cut short, and a network
// error. A call that ctx's cancellation cut short stays as it is.
func (l *Locker) try(ctx context.Context, r request, anchor time.Time) (*Lock, error) {
	var start time.Time
	if l.obs != nil {
		start = time.Now()
	}
	cctx, cancel := context.WithTimeout(ctx, l.callTimeout)
	defer cancel()
	lock, err := l.attempt(cctx, r, anchor)
	if err == nil || definite(err) || errors.Is(err, ErrUnavailable) {
		if l.obs != nil {
			l.attempted(ctx, r, start, err)
		}
		return lock, err
	}
	var netErr net.Error
	switch {
	case ctx.Err() == nil && cctx.Err() != nil:
		err = &batontype.UnavailableError{Err: fmt.Errorf("no answer within CallTimeout %v: %w", l.callTimeout, err)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = &batontype.UnavailableError{Err: fmt.Errorf("no answer before the deadline: %w", err)}
	case ctx.Err() == nil && errors.As(err, &netErr):
		err = &batontype.UnavailableError{Err: err}
	}
	if l.obs != nil {
		l.attempted(ctx, r, start, err)
	}
	return lock, err
}

// acquireErr gives err the one prefix of an acquire's error. A
// *ValidationError has its own.
func acquireErr(name string, err error) error {
	if _, ok := err.(*ValidationError); ok {
		return err
	}
	return fmt.Errorf("baton: acquire %q: %w", name, err)
}

// ctxErr is ctx's error, with its cause when that says more.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || errors.Is(cause, err) {
		return cmp.Or(cause, err)
	}
	return fmt.Errorf("%w: %w", err, cause)
}

// enter waits for this goroutine's turn to acquire name through l.
func (l *Locker) enter(ctx context.Context, name string) (g *gate, wake <-chan struct{}, leave func(), err error) {
	l.mu.Lock()
	g = l.gates[name]
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
	took := false
	select {
	case g.turn <- struct{}{}:
		took = true
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		// Done while queued, or as the turn came (select picks either
		// when both are ready): give the turn back without an attempt,
		// which ctx would only cut short. Claim "held" only if the
		// backend said so to the waiter ahead.
		if took {
			<-g.turn
		}
		l.mu.Lock()
		held := g.held
		l.mu.Unlock()
		done()
		reason := ctxErr(ctx)
		if held {
			reason = fmt.Errorf("%w (last attempt: %w)", reason, ErrNotAcquired)
		}
		return nil, nil, nil, acquireErr(name, reason)
	}
	leave = func() { <-g.turn; done() }
	if l.notifier == nil {
		return g, nil, leave, nil
	}
	// Register before the first attempt: a release between a failed
	// attempt and the registration would go unseen. The registration
	// stays with the gate while waiters remain, for the next in turn.
	l.mu.Lock()
	wake = g.wake
	l.mu.Unlock()
	if wake != nil {
		return g, wake, leave, nil
	}
	ch := make(chan struct{}, 1)
	nctx, cancel := context.WithTimeout(ctx, l.callTimeout)
	stop, err := l.notifier.NotifyRelease(nctx, name, ch)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			// A configuration problem repeats on every wait: say it once.
			level := slog.LevelDebug
			if l.notifyWarned.CompareAndSwap(false, true) {
				level = slog.LevelWarn
			}
			l.log.Log(ctx, level, "baton: release notifications unavailable; polling", "lock_name", name, "err", err)
		}
		return g, nil, leave, nil
	}
	l.mu.Lock()
	g.wake, g.stop = ch, stop
	l.mu.Unlock()
	return g, ch, leave, nil
}

// giveUp ends a wait: it releases what an attempt of unknown outcome may
// have granted and returns reason with the latest attempt's error.
func (l *Locker) giveUp(ctx context.Context, r request, mayHold bool, last, reason error) error {
	if mayHold {
		l.abandon(ctx, r)
	}
	if last != nil {
		reason = fmt.Errorf("%w (last attempt: %w)", reason, last)
	}
	return acquireErr(r.params.Name, reason)
}

// The best-effort release after an acquire of unknown outcome waits for
// at most abandonRoundTrips estimated round trips, and at least
// minAbandonWait: enough for a release over a fresh connection to a
// backend that only dropped a reply, without keeping a caller whose
// deadline has passed waiting on a backend that stopped answering (the
// lease then lapses at its expiry).
const (
	abandonRoundTrips = 4
	minAbandonWait    = 100 * time.Millisecond
)

// abandon releases whatever an attempt of unknown outcome may have granted,
// so that a failed acquire never leaves the caller holding a lock silently.
func (l *Locker) abandon(ctx context.Context, r request) {
	wait := max(abandonRoundTrips*l.estimate(), minAbandonWait)
	err := lease.Abandon(ctx, l.p, r.params.Name, r.params.Owner, min(wait, l.releaseTimeout, l.callTimeout))
	if err != nil {
		l.log.WarnContext(ctx, "baton: release after failed acquire", "lock_name", r.params.Name, "err", err)
	}
}

// attempt makes one acquire call. anchor is the local time of the first
// request that may have produced the grant; the trust window starts there.
func (l *Locker) attempt(ctx context.Context, r request, anchor time.Time) (*Lock, error) {
	start := time.Now()
	grant, err := l.p.Acquire(ctx, r.params)
	if answered(err) {
		l.observe(time.Since(start))
	}
	if err != nil {
		return nil, err
	}
	k := newLock(ctx, l, r, grant, anchor)
	if k.Check() != nil {
		// The grant came back after its trust window had ended (a very
		// slow round trip or a pause): it cannot be trusted.
		_ = k.Release(ctx)
		return nil, errLateGrant
	}
	return k, nil
}

// observe folds one round trip into the estimate. A faster sample pulls
// the estimate half-way down at once, a slower one moves it up by an
// eighth: the estimate decides when Acquire stops waiting, and one slow
// round trip (a cold connection, a blip) must not make short deadlines
// fail long after the backend is fast again.
func (l *Locker) observe(d time.Duration) {
	for {
		old := l.rtt.Load()
		nv := int64(d)
		switch {
		case old == 0:
		case nv < old:
			nv = old - (old-nv)/2
		default:
			nv = old + (nv-old)/8
		}
		if l.rtt.CompareAndSwap(old, nv) {
			return
		}
	}
}

// estimate is the current round-trip estimate.
func (l *Locker) estimate() time.Duration { return time.Duration(l.rtt.Load()) }

// answered reports whether err means the backend answered a request, so
// that its duration is a round trip worth observing.
func answered(err error) bool {
	return err == nil || errors.Is(err, batontype.ErrNotAcquired) ||
		errors.Is(err, batontype.ErrNotHeld) || errors.Is(err, batontype.ErrStaleTick)
}
