package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Margin is the default safety margin subtracted from a lease of length d
// to give the local trust window: 1% of d for a local clock that runs at a
// slightly different rate from the backend's, plus an allowance for timer
// and scheduling latency (a timer fires late and a goroutine waits for a CPU
// under load) of 20 ms, or a quarter of d for leases shorter than 80 ms so
// that they still leave a usable window. It is always less than d.
func Margin(d time.Duration) time.Duration {
	return d/100 + min(d/4, maxLatencyAllowance)
}

// maxLatencyAllowance covers the timer and scheduling delays seen on a
// loaded two-core machine (up to about 19 ms between a window's end and the
// cancellation of the holder's context).
const maxLatencyAllowance = 20 * time.Millisecond

// LockedBy is the default holder identity shown to operators: the host name
// and the process id, as "host/pid", shortened from the left to the
// providers' limit.
func LockedBy() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	s := host + "/" + strconv.Itoa(os.Getpid())
	if len(s) > batontype.MaxLockedByLen {
		// Informational only; a long host name must not make every
		// acquire fail.
		s = s[len(s)-batontype.MaxLockedByLen:]
	}
	return s
}

// ErrZero is returned by the methods of a Lease that was never started (a
// zero baton.Lock, say). It matches batontype.ErrInvalid.
var ErrZero error = &batontype.ValidationError{
	Field: "Lock", Value: `""`, Reason: "is the zero value; obtain a lock from a Locker", Err: batontype.ErrInvalid,
}

// Observer receives the duration of every provider round trip a Lease makes.
type Observer interface{ Observe(time.Duration) }

// Policy is what the leases of one user (a Locker, a Scheduler) share;
// see NewPolicy.
type Policy struct {
	Provider lockprovider.Provider
	// Margin is subtracted from every lease to give the trust window. Zero
	// means Margin(d).
	Margin time.Duration
	// CallTimeout bounds each Extend call when positive, on top of the
	// caller's context.
	CallTimeout time.Duration
	// ReleaseTimeout bounds Release, which ignores the cancellation of its
	// context. Zero means CallTimeout, or 5s if that is zero too.
	ReleaseTimeout time.Duration
	// Released is the cause of the context after Release.
	Released error
	// Now is the clock of the trust window; its times must carry a
	// monotonic reading. Nil means time.Now.
	Now func() time.Time
	// Observer, if set, sees every round trip.
	Observer Observer
	// Events, if set, receives the leases' LockExtended, LockLost and
	// LockReleased events.
	Events observe.Observer
	// Logger receives lost leases and failed renewals and releases; nil
	// discards them.
	Logger *slog.Logger
	// Label prefixes errors and log messages ("baton", "scheduler").
	Label string
}

// Params are the per-lease inputs.
type Params struct {
	Name, Owner string
	AtMostFor   time.Duration // the requested lease length
	AtLeastFor  time.Duration // the minimum hold the acquire asked for
	AutoRenew   bool
	// OnLost, if set, is called once when the lease is lost (never after
	// Release), after the context was cancelled.
	OnLost func(cause error)
	// Release, if set, replaces Policy.Provider.Release for this lease,
	// e.g. to record the run's end in the same round trip (the scheduler's
	// run ledger). It must behave as Provider.Release, and bound its call
	// by Policy.ReleaseTimeout itself: Lease.Release passes it a context
	// without cancellation and without that bound, so that a caller
	// sending many leases' releases in one call (the scheduler) sets up
	// one deadline for the call rather than one per lease.
	Release func(ctx context.Context, p lockprovider.ReleaseParams) error
}

// Lease is one held lease: the grant, its local trust window on the
// monotonic clock, and the context that ends with it. It must not be copied
// after Start. Its methods are safe for concurrent use; those of a zero
// Lease return ErrZero.
type Lease struct {
	pol     *Policy
	name    string
	owner   string
	onLost  func(error)
	release func(context.Context, lockprovider.ReleaseParams) error // Params.Release

	vctx   valueCtx // the parent context, carrying this Lease
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	grant  batontype.Lease
	length time.Duration // lease length that auto-renew maintains
	sent   time.Time     // send time of the grant or extension the window counts from
	// atLeastAt is the latest the backend can have put the end of the
	// minimum hold, on the local clock: the bound asked for, counted from
	// the reply that set it. The backend counts it from when it handled
	// the request, which lies between send and reply; counting from the
	// send would let an extension ask for a bound earlier than the one in
	// force after a slow request.
	atLeastAt time.Time
	deadline  time.Time   // end of the trust window
	ended     error       // nil while held; the loss or Released
	timer     *time.Timer // fires at deadline

	extMu sync.Mutex // serialises extensions

	relMu    sync.Mutex
	released bool // the provider answered a Release
	relSent  bool // a Release of unknown outcome was sent

	renewStop context.CancelFunc // nil without auto-renew
	renewDone chan struct{}
}

// NewPolicy returns p with its defaults filled in, for the leases of one
// user to share.
func NewPolicy(p Policy) *Policy {
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.ReleaseTimeout <= 0 {
		p.ReleaseTimeout = p.CallTimeout
		if p.ReleaseTimeout <= 0 {
			p.ReleaseTimeout = 5 * time.Second
		}
	}
	return &p
}

// Start initialises l, a zero Lease, for grant, which the provider returned
// to an acquire sent at sent (on the policy's clock). pol comes from
// NewPolicy and must not change afterwards. The context of l is derived
// from parent; the trust window ends at sent plus the granted length (at
// most p.AtMostFor) minus the margin. A window that has already ended is
// not reported here: call Check.
func (l *Lease) Start(parent context.Context, pol *Policy, p Params, grant batontype.Lease, sent time.Time) {
	l.pol = pol
	l.name, l.owner, l.onLost = p.Name, p.Owner, p.OnLost
	l.release = p.Release
	l.vctx = valueCtx{Context: parent, l: l}
	l.ctx, l.cancel = context.WithCancelCause(&l.vctx)

	length := p.AtMostFor
	if granted := grant.Until.Sub(grant.GrantedAt); granted > 0 && granted < length {
		length = granted
	}
	var renewCtx context.Context
	if p.AutoRenew {
		// Set before the timer exists: a window that has already ended
		// makes it fire at once, and the loss stops the renewals.
		renewCtx, l.renewStop = context.WithCancel(context.WithoutCancel(l.ctx))
		l.renewDone = make(chan struct{})
	}
	l.mu.Lock()
	l.grant, l.length, l.sent = grant, p.AtMostFor, sent
	// Start runs after the reply, so now is no earlier than it.
	l.atLeastAt = pol.Now().Add(p.AtLeastFor)
	l.deadline = sent.Add(length - l.margin(length))
	l.timer = time.AfterFunc(l.deadline.Sub(pol.Now()), l.windowEnded)
	l.mu.Unlock()
	if renewCtx != nil {
		go l.renew(renewCtx)
	}
}

func (l *Lease) margin(d time.Duration) time.Duration {
	if l.pol.Margin > 0 {
		return l.pol.Margin
	}
	return Margin(d)
}

// Name returns the lease's name ("" for a zero Lease).
func (l *Lease) Name() string { return l.name }

// Grant returns the provider's grant as last extended.
func (l *Lease) Grant() batontype.Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grant
}

// Token returns the fencing token of the grant.
func (l *Lease) Token() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grant.Token
}

// TrustedUntil returns the end of the trust window on Policy.Now's clock.
func (l *Lease) TrustedUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Context returns the context that ends with the lease: cancelled with a
// cause matching ErrLockLost on loss, with Policy.Released after Release,
// or with its parent. Its Err, Done and Value call Check first, so it is
// seen ended as soon as the trust window has passed, even when the
// window's timer has not run yet (after a pause). A zero Lease returns a
// context already cancelled with ErrZero.
func (l *Lease) Context() context.Context {
	if l.ctx == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrZero)
		return ctx
	}
	return Checked(l.ctx, l.Check)
}

// Checked returns ctx with Err, Done and Value calling check first. check
// is expected to cancel ctx (or an ancestor it derives from) when what ctx
// stands for has ended by the clock, so that a reader of the returned
// context sees the end at once rather than when a timer runs.
func Checked(ctx context.Context, check func() error) context.Context {
	return &checkedCtx{Context: ctx, check: check}
}

type checkedCtx struct {
	context.Context
	check func() error
}

func (c *checkedCtx) Done() <-chan struct{} {
	c.check()
	return c.Context.Done()
}

func (c *checkedCtx) Err() error {
	c.check()
	return c.Context.Err()
}

// Value checks too, because context.Cause reads the cause through Value.
func (c *checkedCtx) Value(key any) any {
	c.check()
	return c.Context.Value(key)
}

// Check compares the trust window with the clock now, without waiting for
// the window's timer (which a paused or starved process runs late). It
// returns nil while the window is open. Once it has passed, it ends the
// lease as lost (cancelling the context) and returns an error matching
// ErrLockLost; after a loss or Release it returns what ended the lease.
func (l *Lease) Check() error {
	if l.ctx == nil {
		return ErrZero
	}
	l.mu.Lock()
	if err := l.ended; err != nil {
		l.mu.Unlock()
		return err
	}
	if l.pol.Now().Before(l.deadline) {
		l.mu.Unlock()
		return nil
	}
	cause := fmt.Errorf("%w: trust window ended", batontype.ErrLockLost)
	l.endLocked(cause)
	l.mu.Unlock()
	l.lost(cause)
	return cause
}

// Check calls Check on the Lease that ctx carries (the context of a Lease,
// or one derived from it), and returns nil when it carries none. Writers
// that take a context call it before writing, so that a holder whose trust
// window passed (during a pause, say) is stopped before its write reaches
// the resource.
func Check(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	if l, ok := ctx.Value(ctxKey{}).(*Lease); ok {
		return l.Check()
	}
	return nil
}

type ctxKey struct{}

// valueCtx makes the Lease's context carry the Lease without a separate
// allocation for context.WithValue.
type valueCtx struct {
	context.Context
	l *Lease
}

func (c *valueCtx) Value(key any) any {
	if key == (ctxKey{}) {
		return c.l
	}
	return c.Context.Value(key)
}

// endLocked records the end of the lease and cancels its context. l.mu is
// held. It reports whether this call ended it.
func (l *Lease) endLocked(cause error) bool {
	if l.ended != nil {
		return false
	}
	l.ended = cause
	l.timer.Stop()
	l.cancel(cause)
	return true
}

// lose ends the lease as lost, once.
func (l *Lease) lose(cause error) {
	l.mu.Lock()
	ended := l.endLocked(cause)
	l.mu.Unlock()
	if ended {
		l.lost(cause)
	}
}

// lost reports a loss recorded by endLocked.
func (l *Lease) lost(cause error) {
	if l.renewStop != nil {
		l.renewStop()
	}
	l.pol.Logger.Warn(l.pol.Label+": lock lost", "lock_name", l.name, "token", l.Token(), "err", cause)
	if l.pol.Events != nil {
		l.emit(l.ctx, observe.LockLost, time.Time{}, cause)
	}
	if l.onLost != nil {
		l.onLost(cause)
	}
}

// windowEnded runs when the trust-window timer fires.
func (l *Lease) windowEnded() {
	// Decided under mu, so that an extension either moved the deadline
	// before this check or finds the lease ended when it takes mu.
	l.mu.Lock()
	if l.ended != nil {
		l.mu.Unlock()
		return
	}
	if left := l.deadline.Sub(l.pol.Now()); left > 0 {
		// Moved meanwhile, or the clock is not the timer's.
		l.timer.Reset(left)
		l.mu.Unlock()
		return
	}
	cause := fmt.Errorf("%w: trust window ended", batontype.ErrLockLost)
	l.endLocked(cause)
	l.mu.Unlock()
	l.lost(cause)
}

// Extend sets the lease to end d from now (backend time) and restarts the
// trust window at this call's send. What is left of the minimum hold is
// kept, within d. It returns a *batontype.ValidationError for a d that
// is out of range or not above the margin; when the lease is no longer
// held, an error matching ErrLockLost and ErrNotHeld (and the lease ends as
// lost); after a loss or Release, what ended it. Any other error is of
// unknown outcome. A d shorter than what is left of the window ends it at
// the send plus d (less the margin) from the moment of the send, since the
// backend may apply it before the reply; a failure known to have changed
// nothing restores the window.
func (l *Lease) Extend(ctx context.Context, d time.Duration) error {
	if l.ctx == nil {
		return ErrZero
	}
	if ctx == nil {
		return batontype.ErrNilContext
	}
	if err := batontype.ValidateDurations(d, 0); err != nil {
		return err
	}
	if m := l.margin(d); m >= d {
		return &batontype.ValidationError{Field: "d", Value: strconv.Quote(d.String()),
			Reason: "must exceed the trust window's safety margin " + m.String(), Err: batontype.ErrInvalidDuration}
	}
	return l.extend(ctx, d)
}

func (l *Lease) extend(ctx context.Context, d time.Duration) error {
	l.extMu.Lock()
	defer l.extMu.Unlock()
	if err := l.Err(); err != nil {
		return err
	}
	if l.pol.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.pol.CallTimeout)
		defer cancel()
	}
	send := l.pol.Now()
	l.mu.Lock()
	atLeast := min(max(l.atLeastAt.Sub(send), 0), d)
	// The backend may apply the extension at any moment from the send,
	// long before a slow reply: one that shortens the lease ends the
	// window now where it would end on success, or the holder would trust
	// the old window while another owner is granted the name. Only a
	// failure known to have changed nothing gives the old window back.
	before := l.deadline
	if end := send.Add(d - l.margin(d)); l.ended == nil && end.Before(l.deadline) {
		l.deadline = end
		l.timer.Reset(l.deadline.Sub(l.pol.Now()))
	}
	l.mu.Unlock()
	grant, err := l.pol.Provider.Extend(ctx, lockprovider.ExtendParams{
		Name: l.name, Owner: l.owner, AtMostFor: d, AtLeastFor: atLeast,
	})
	l.observe(send)
	if l.pol.Events != nil {
		l.emit(ctx, observe.LockExtended, send, err)
	}
	switch {
	case err == nil:
	case errors.Is(err, batontype.ErrNotHeld):
		l.lose(fmt.Errorf("%w: %w", batontype.ErrLockLost, err))
		return l.Err()
	case batontype.Definite(err):
		l.mu.Lock()
		if l.ended == nil && before.After(l.deadline) {
			l.deadline = before
			l.timer.Reset(l.deadline.Sub(l.pol.Now()))
		}
		l.mu.Unlock()
		return err
	default:
		// The extension may have taken effect: the window stays as the
		// send left it.
		return fmt.Errorf("%s: extend %q: %w", l.pol.Label, l.name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended != nil {
		// Lost or released while the call was in flight; the end is
		// final even though the backend granted the extension.
		return l.ended
	}
	l.grant, l.length, l.sent = grant, d, send
	if atLeast > 0 {
		// The backend counted atLeast from when it handled the call, at
		// the latest now; a later extension must not ask for less.
		if at := l.pol.Now().Add(atLeast); at.After(l.atLeastAt) {
			l.atLeastAt = at
		}
	}
	l.deadline = send.Add(d - l.margin(d))
	// A reply that came after its own window makes the timer fire at once.
	l.timer.Reset(l.deadline.Sub(l.pol.Now()))
	return nil
}

// emit reports an event of kind k about l to Policy.Events (which is set)
// with ctx, the context of the lease (carrying the acquiring context's
// values, a trace span say) or one derived from it. send is the start of
// a round trip that just returned err, or zero for a loss.
func (l *Lease) emit(ctx context.Context, k observe.Kind, send time.Time, err error) {
	l.mu.Lock()
	grant := l.grant
	l.mu.Unlock()
	e := observe.Event{Kind: k, Name: l.name, Tick: grant.Tick, Token: grant.Token, Err: err}
	if !send.IsZero() {
		e.Start, e.Duration = send, l.pol.Now().Sub(send)
		switch {
		case err == nil:
			e.Outcome = observe.OutcomeOK
		case errors.Is(err, batontype.ErrNotHeld):
			e.Outcome = observe.OutcomeNotHeld
		default:
			e.Outcome = observe.OutcomeError
		}
	}
	l.pol.Events.Observe(ctx, e)
}

func (l *Lease) observe(send time.Time) {
	if l.pol.Observer != nil {
		l.pol.Observer.Observe(l.pol.Now().Sub(send))
	}
}

// Err returns what ended the lease, or nil while it is held. Unlike Check
// it does not look at the clock.
func (l *Lease) Err() error {
	if l.ctx == nil {
		return ErrZero
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// renew is the auto-renew goroutine. Each renewal is due a third of the
// lease length after the send of the grant or extension the window counts
// from, not after its reply, so a slow round trip does not push renewals
// towards the window's end. A renewal that fails is retried promptly, each
// attempt bounded by the trust window; the window's timer ends the lease if
// none succeeds in time. It returns when the lease ends.
func (l *Lease) renew(ctx context.Context) {
	defer close(l.renewDone)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	failures := 0
	for {
		l.mu.Lock()
		length, sent, deadline := l.length, l.sent, l.deadline
		l.mu.Unlock()
		now := l.pol.Now()
		wait := sent.Add(length / 3).Sub(now)
		if failures > 0 {
			wait = retryDelay(length)
		}
		if left := deadline.Sub(now); left <= 0 {
			return // the window's timer ends the lease
		} else if wait > left {
			wait = left
		}
		t.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Bounded by the window on the real clock: a renewal that comes
		// back after it could not be used.
		cctx, cancel := context.WithTimeout(ctx, deadline.Sub(l.pol.Now()))
		err := l.extend(cctx, length)
		cancel()
		if ctx.Err() != nil || l.Err() != nil {
			return
		}
		if err == nil {
			failures = 0
			continue
		}
		failures++
		level := slog.LevelDebug
		if failures == 1 {
			level = slog.LevelWarn
		}
		l.pol.Logger.Log(context.Background(), level, l.pol.Label+": renewal failed; retrying",
			"lock_name", l.name, "failures", failures, "err", err)
	}
}

// retryDelay is the pause between renewal attempts after a failure: short,
// since the window is running out, but not a hot loop against a backend
// that refuses at once.
func retryDelay(length time.Duration) time.Duration {
	return max(min(length/50, 100*time.Millisecond), time.Millisecond)
}

// Release ends the lease: its context is cancelled with Policy.Released
// (unless it was lost before), auto-renew stops, and the provider releases
// the lease (keeping it until its minimum hold if that lies ahead). It
// ignores ctx's cancellation and is bounded by Policy.ReleaseTimeout.
//
// Once the provider has answered, later calls return nil. When the
// provider says ErrNotHeld, Release returns nil if an earlier Release of
// unknown outcome was sent and this retry was sent inside the trust window
// of the last grant or extension: only that earlier Release can have ended
// the lease. Otherwise the lease had lapsed or passed to another owner
// before the release, and the error matches ErrLockLost and ErrNotHeld.
// Other errors are of unknown outcome: the lease lapses at its expiry, and
// calling Release again retries. A nil ctx counts as context.Background.
func (l *Lease) Release(ctx context.Context) error {
	if l.ctx == nil {
		return ErrZero
	}
	if ctx == nil {
		ctx = context.Background() // releasing matters more than the mistake
	}
	l.relMu.Lock()
	defer l.relMu.Unlock()
	if l.released {
		return nil
	}
	l.mu.Lock()
	l.endLocked(l.pol.Released)
	deadline := l.deadline
	l.mu.Unlock()
	if l.renewStop != nil {
		l.renewStop()
		<-l.renewDone
	}
	ctx = detach(ctx)
	release := l.release
	if release == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.pol.ReleaseTimeout)
		defer cancel()
		release = l.pol.Provider.Release
	}
	send := l.pol.Now()
	err := release(ctx, lockprovider.ReleaseParams{Name: l.name, Owner: l.owner})
	l.observe(send)
	if l.pol.Events != nil {
		l.emit(l.ctx, observe.LockReleased, send, err)
	}
	switch {
	case err == nil:
		l.released = true
		return nil
	case errors.Is(err, batontype.ErrNotHeld):
		l.released = true
		if l.relSent && send.Before(deadline) {
			return nil // the earlier release landed; only its reply was lost
		}
		if !errors.Is(l.Err(), batontype.ErrLockLost) {
			l.pol.Logger.Warn(l.pol.Label+": lease had ended before release", "lock_name", l.name, "token", l.Token())
		}
		return fmt.Errorf("%s: release %q: %w: the lease lapsed or passed to another owner before the release: %w",
			l.pol.Label, l.name, batontype.ErrLockLost, err)
	case batontype.Definite(err):
		l.released = true
		return fmt.Errorf("%s: release %q: %w", l.pol.Label, l.name, err)
	default:
		l.relSent = true
		l.pol.Logger.Warn(l.pol.Label+": release failed; the lease lapses at its expiry", "lock_name", l.name, "err", err)
		return fmt.Errorf("%s: release %q: %w", l.pol.Label, l.name, err)
	}
}

// Abandon releases, best effort, whatever an acquire of unknown outcome
// with this owner token may have granted, so that a failed acquire does not
// keep the name held until the lease expires. It ignores ctx's
// cancellation (it runs after a Close too) and is bounded by timeout. It
// returns the provider's error, or nil when nothing was held.
func Abandon(ctx context.Context, p lockprovider.Provider, name, owner string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(detach(ctx), timeout)
	defer cancel()
	err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
	if errors.Is(err, batontype.ErrNotHeld) {
		return nil
	}
	return err
}

// Detach returns ctx without its cancellation (and deadline), keeping its
// values. context.Background and TODO are returned as they are, saving an
// allocation (asking ctx.Done would allocate a channel in a cancelable
// context, which costs more than it saves).
func Detach(ctx context.Context) context.Context { return detach(ctx) }

func detach(ctx context.Context) context.Context {
	if ctx == context.Background() || ctx == context.TODO() {
		return ctx
	}
	return context.WithoutCancel(ctx)
}
