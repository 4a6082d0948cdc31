package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/isnil"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
)

// DefaultAtMostFor is the term's lease length when Config.AtMostFor is zero:
// a leader that dies or stops is replaced at most this long after its last
// renewal.
const DefaultAtMostFor = 15 * time.Second

// Errors of package leader.
var (
	// ErrResigned is the cause of a Term's Context after Resign.
	ErrResigned = errors.New("leader: resigned")
	// ErrNoLeader is returned by Election.Leader when nobody leads.
	ErrNoLeader = errors.New("leader: no leader")
	// ErrNotLeader is returned by Election.IsLeader when this candidate
	// holds no term in force.
	ErrNotLeader = errors.New("leader: not the leader")
	// ErrObserveNotSupported is matched by the error of Election.Leader on
	// a provider that cannot report lease state (it does not implement
	// lockprovider.Inspector). It matches baton.ErrInvalid.
	ErrObserveNotSupported = fmt.Errorf("%w: the provider cannot report the leader (no lockprovider.Inspector)", baton.ErrInvalid)
)

// Config configures an Election. The zero value (or a nil *Config) means the
// documented defaults.
type Config struct {
	// AtMostFor is the lease length of a term. The leader renews it every
	// third of AtMostFor (auto-renew); when it cannot (it crashed, was
	// paused, lost the backend), the leadership ends AtMostFor after the
	// last renewal and another candidate is elected. Its own term ends
	// earlier, at the end of its trust window (see package baton). Zero
	// means DefaultAtMostFor.
	AtMostFor time.Duration

	// LockedBy identifies this candidate to observers: Election.Leader
	// reports the leader's. Empty means "hostname/pid".
	LockedBy string

	// Logger receives lost terms and failed renewals. Nil discards them.
	Logger *slog.Logger
}

// Election is one candidate's handle on a named leadership. It holds no
// goroutines while not leading and needs no closing; it is safe for
// concurrent use. Candidates of the same leadership use the same name on the
// same provider, each with its own Election.
type Election struct {
	name   string
	ttl    time.Duration
	locker *baton.Locker
	insp   lockprovider.Inspector // nil: Leader unsupported
	p      lockprovider.Provider
	log    *slog.Logger

	current atomic.Pointer[Term] // the latest term won, until it is resigned; see IsLeader
}

// New returns a candidate for the leadership called name on p. The
// leadership is the lock of that name: it must not be used as a lock
// elsewhere. New returns baton.ErrNilProvider for a nil p and a
// *baton.ValidationError for a bad name or cfg.
func New(p lockprovider.Provider, name string, cfg *Config) (*Election, error) {
	if isnil.IsNil(p) {
		return nil, baton.ErrNilProvider
	}
	c := defaults.Of(cfg)
	if err := batontype.ValidateName(name); err != nil {
		return nil, batontype.InPkg("leader", err)
	}
	if c.AtMostFor < 0 {
		return nil, &baton.ValidationError{Pkg: "leader", Field: "Config.AtMostFor", Value: c.AtMostFor.String(),
			Reason: "must not be negative (zero means the default)", Err: baton.ErrInvalidDuration}
	}
	if c.AtMostFor == 0 {
		c.AtMostFor = DefaultAtMostFor
	}
	locker, err := baton.NewLocker(p, &baton.Config{Logger: c.Logger, LockedBy: c.LockedBy, AtMostFor: c.AtMostFor})
	if err != nil {
		return nil, err
	}
	e := &Election{name: name, ttl: c.AtMostFor, locker: locker, p: p, log: c.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.insp, _ = p.(lockprovider.Inspector)
	return e, nil
}

// Name returns the leadership's name.
func (e *Election) Name() string { return e.name }

// Campaign waits until this candidate is elected or ctx is done. It is
// Locker.Acquire with auto-renew: woken by the provider's release
// notifications when the leader resigns, and polling for a leader whose
// lease expired. When ctx is done it returns an error matching ctx's error
// (see baton.Locker.Acquire).
//
// The Term it returns stays in force, renewed in the background, until
// Resign or loss; always Resign it. A ctx that is the Context of this
// Election's current term (or derives from it) returns a nested hold of
// that term (see baton.Locker.Acquire), whose Resign keeps the leadership.
func (e *Election) Campaign(ctx context.Context) (*Term, error) {
	lock, err := e.locker.Acquire(ctx, e.name, &baton.AcquireOptions{AtMostFor: e.ttl, AutoRenew: true})
	if err != nil {
		return nil, err // named already: baton: acquire "name": ...
	}
	return e.won(lock), nil
}

// TryCampaign makes one attempt to be elected. It returns an error matching
// baton.ErrNotAcquired when another candidate leads.
func (e *Election) TryCampaign(ctx context.Context) (*Term, error) {
	lock, err := e.locker.TryAcquire(ctx, e.name, &baton.AcquireOptions{AtMostFor: e.ttl, AutoRenew: true})
	if err != nil {
		return nil, err // named already: baton: acquire "name": ...
	}
	return e.won(lock), nil
}

// won makes the term of a granted lock and records it for IsLeader, unless
// it is a nested hold of the recorded term (the same lease).
func (e *Election) won(lock *baton.Lock) *Term {
	t := &Term{lock: lock, e: e}
	t.ctx, t.cancel = context.WithCancelCause(lock.Context())
	if cur := e.current.Load(); cur == nil || cur.Lease().Owner != lock.Lease().Owner {
		e.current.Store(t)
	}
	return t
}

// IsLeader returns nil while this candidate holds a term in force (its
// trust window checked against the clock now, as Term.Check does; no round
// trip), and an error matching ErrNotLeader otherwise. Campaign or Run must
// be running for it to become nil. Its signature is that of gocron v2's
// Elector interface, so an Election can gate a gocron scheduler; the
// caveat of every leadership check applies: a pause between the check and
// the work is caught only by fenced writes.
func (e *Election) IsLeader(context.Context) error {
	t := e.current.Load()
	if t == nil {
		return ErrNotLeader
	}
	if err := t.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return nil
}

// Info is the current leader as the backend records it.
type Info struct {
	LockedBy  string    // the leader's Config.LockedBy
	Token     int64     // its term's fencing token
	GrantedAt time.Time // when its term was granted (backend clock)
	Until     time.Time // when its term ends unless renewed (backend clock)
}

// Leader reports who leads now, as the backend sees it. It returns
// ErrNoLeader when nobody does (never elected, resigned, or lapsed), and an
// error matching ErrObserveNotSupported when the provider cannot report
// lease state. A leader that was paused or cut off may still be reported
// until its lease lapses on the backend; its own Term ends earlier.
func (e *Election) Leader(ctx context.Context) (Info, error) {
	if ctx == nil {
		return Info{}, baton.ErrNilContext
	}
	if e.insp == nil {
		return Info{}, &baton.ValidationError{Pkg: "leader", Field: "provider", Value: fmt.Sprintf("%T", e.p),
			Reason: "does not implement lockprovider.Inspector", Err: ErrObserveNotSupported}
	}
	li, err := e.insp.Inspect(ctx, e.name)
	if err != nil {
		return Info{}, fmt.Errorf("leader: observe %q: %w", e.name, err)
	}
	if !li.Held {
		return Info{}, fmt.Errorf("leader: observe %q: %w", e.name, ErrNoLeader)
	}
	return Info{LockedBy: li.LockedBy, Token: li.Token, GrantedAt: li.GrantedAt, Until: li.Until}, nil
}

// Run campaigns and calls fn with each term this candidate wins, until ctx
// is done. fn should work until its context is done: that context ends when
// the term is lost (cause baton.ErrLockLost) or when ctx is done (ctx's
// cause). When fn returns, Run resigns the term; if the term had been lost,
// it campaigns again, otherwise it returns fn's error (nil included). It
// returns an error matching ctx's error once ctx is done.
func (e *Election) Run(ctx context.Context, fn func(ctx context.Context, term *Term) error) error {
	if ctx == nil {
		return baton.ErrNilContext
	}
	if fn == nil {
		return &baton.ValidationError{Pkg: "leader", Field: "fn", Value: "nil", Reason: "must not be nil", Err: baton.ErrInvalid}
	}
	for {
		term, err := e.Campaign(ctx)
		if err != nil {
			return err
		}
		ferr := e.serve(ctx, term, fn)
		lost := errors.Is(term.Err(), baton.ErrLockLost)
		if rerr := term.Resign(context.WithoutCancel(ctx)); rerr != nil && !lost {
			e.log.WarnContext(ctx, "leader: resign", "leadership", e.name, "token", term.Token(), "err", rerr)
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("leader: run %q: %w", e.name, ctxErr(ctx))
		case lost:
			e.log.InfoContext(ctx, "leader: term lost; campaigning again", "leadership", e.name,
				"token", term.Token(), "err", term.Err())
		default:
			return ferr
		}
	}
}

// serve runs fn with a context that ends with the term or with ctx.
func (e *Election) serve(ctx context.Context, term *Term, fn func(context.Context, *Term) error) error {
	fctx, cancel := context.WithCancelCause(term.Context())
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	return fn(lease.Checked(fctx, term.lock.Check), term)
}

// Term is one won election: the leadership held under one fencing token
// until Resign or loss. Its methods are safe for concurrent use.
type Term struct {
	lock   *baton.Lock
	e      *Election
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Token returns the term's fencing token: larger than the token of every
// earlier term of this leadership. Pass it to the fence guards (packages
// fence, fence/pgfence, fence/redisfence) with the term's Context so that a
// deposed leader's late writes are rejected.
func (t *Term) Token() int64 { return t.lock.Token() }

// Context returns a context that ends with the term: with a cause matching
// baton.ErrLockLost when the leadership was lost (a renewal found it gone,
// or the trust window ended without one), or ErrResigned after Resign. It
// carries the term's lease, so the fence guards given it (or a context
// derived from it) check the trust window before writing. Like the lock's
// context, its Err, Done and Value compare the window with the clock, so
// it is seen ended as soon as the window has passed (after a pause, say),
// not only when the window's timer runs.
func (t *Term) Context() context.Context { return lease.Checked(t.ctx, t.lock.Check) }

// Check reports whether this candidate can still act as the leader,
// comparing the trust window with the clock now (see baton.Lock.Check):
// nil while it can, an error matching baton.ErrLockLost once the term is
// lost, ErrResigned after Resign. Call it right before acting as the leader.
func (t *Term) Check() error {
	if err := t.Err(); err != nil {
		return err
	}
	return t.lock.Check()
}

// Err returns what ended the term, or nil while it is in force. Unlike
// Check it does not look at the clock.
func (t *Term) Err() error {
	if t.ctx.Err() == nil {
		return nil
	}
	return context.Cause(t.ctx)
}

// Lease returns the term's lease as last renewed; its times are the
// backend's.
func (t *Term) Lease() batontype.Lease { return t.lock.Lease() }

// Resign gives up the leadership: the term's Context ends with ErrResigned,
// renewal stops and the lease is released, which wakes the other
// candidates. It is idempotent, ignores ctx's cancellation (bounded by the
// release timeout, see baton.Lock.Release) and returns the release's error:
// after a loss, one matching baton.ErrLockLost.
func (t *Term) Resign(ctx context.Context) error {
	t.cancel(ErrResigned)
	t.e.current.CompareAndSwap(t, nil)
	return t.lock.Release(ctx) // errors named already: baton: release "name": ...
}

// ctxErr is ctx's error, with its cause when that says more.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || errors.Is(cause, err) {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}
