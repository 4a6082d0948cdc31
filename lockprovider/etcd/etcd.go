package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/lockprovider"
)

// Defaults of Config.
const (
	DefaultPrefix  = "baton/"
	DefaultTimeout = 5 * time.Second
)

// MaxPrefixLen bounds Config.Prefix.
const MaxPrefixLen = keyspace.MaxPrefixLen

// Config configures a Provider. The zero value (or a nil *Config) means the
// defaults documented on each field.
type Config struct {
	// Prefix starts every key the provider writes. Default DefaultPrefix
	// ("baton/"). Printable text.
	Prefix string

	// Timeout bounds each operation when the caller's context has no
	// earlier deadline. The etcd client waits for a reachable member
	// indefinitely otherwise, so without it an Acquire during an outage
	// would never return. When it fires the error matches
	// batontype.ErrUnavailable. Default DefaultTimeout (5 s).
	Timeout time.Duration

	// ClockExpiry makes a lease also end, for contenders, when its Until
	// has passed on the acquiring client's clock, not only when etcd ends
	// its whole-second lease. Leases shorter than a second then lapse on
	// time, but mutual exclusion relies on the clients' clocks agreeing:
	// a client whose clock runs ahead takes leases over early. Off by
	// default: etcd alone decides when a name is free again. See the
	// package documentation.
	ClockExpiry bool

	// Logger receives failures of the release watch. Nil discards.
	Logger *slog.Logger
}

// Provider is a lockprovider.Provider on etcd. It also implements
// lockprovider.ReleaseNotifier and lockprovider.Inspector. It is safe for
// concurrent use. It does not own the client and never closes it.
type Provider struct {
	client  *clientv3.Client
	prefix  string
	timeout time.Duration
	clock   bool
	log     *slog.Logger
	notify  notifier
}

var (
	_ lockprovider.Provider        = (*Provider)(nil)
	_ lockprovider.ReleaseNotifier = (*Provider)(nil)
	_ lockprovider.Inspector       = (*Provider)(nil)
)

// New returns a provider that keeps its leases in the etcd cluster behind
// client. A nil cfg means the defaults. It makes no network call.
func New(client *clientv3.Client, cfg *Config) (*Provider, error) {
	if client == nil {
		return nil, &batontype.ValidationError{Pkg: "etcd", Field: "client", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	var c Config
	if cfg != nil {
		c = *cfg
	}
	prefix, err := keyspace.Prefix(c.Prefix, DefaultPrefix, false)
	if err != nil {
		return nil, err
	}
	timeout, err := defaults.Duration("Timeout", c.Timeout, DefaultTimeout, time.Millisecond, 0, "must be at least 1ms")
	if err != nil {
		return nil, err
	}
	p := &Provider{client: client, prefix: prefix, timeout: timeout, clock: c.ClockExpiry, log: defaults.Logger(c.Logger)}
	p.notify.init(p)
	return p, nil
}

// Prefix returns the key prefix in use.
func (p *Provider) Prefix() string { return p.prefix }

// Key layout under the prefix P for a name N (see doc.go).
const (
	lockDir = "lock/"
	holdDir = "hold/"
	recDir  = "rec/"
	tickDir = "tick/"
)

type keys struct{ lock, hold, rec, tick string }

func (p *Provider) keys(name string) keys {
	return keys{p.prefix + lockDir + name, p.prefix + holdDir + name, p.prefix + recDir + name, p.prefix + tickDir + name}
}

// Fixed-width decimals, so that etcd's byte-wise value comparison orders
// them as numbers: milliseconds for lease times, nanoseconds for ticks.
func ms(t int64) string   { return pad(t, 15) }
func tick(t int64) string { return pad(t, 20) }

func pad(v int64, width int) string {
	s := strconv.FormatInt(v, 10)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}

// The lock key's value is owner NUL until NUL atLeastUntil. Owner tokens
// contain no control characters, so the values of one owner are exactly
// those between owner+"\x00" and owner+"\x01": two comparisons check the
// owner in a transaction, and a third bound on the until part checks that
// the lease has not ended.
func lockValue(owner string, until, atLeast int64) string {
	return owner + "\x00" + ms(until) + "\x00" + ms(atLeast)
}

func parseLock(v []byte) (owner string, until, atLeast int64, ok bool) {
	parts := strings.Split(string(v), "\x00")
	if len(parts) != 3 {
		return "", 0, 0, false
	}
	u, err1 := strconv.ParseInt(parts[1], 10, 64)
	a, err2 := strconv.ParseInt(parts[2], 10, 64)
	return parts[0], u, a, err1 == nil && err2 == nil
}

// The record's value describes the current or last grant; it is written
// only by grants, so its ModRevision is the grant's fencing token.
type record struct {
	owner     string
	grantedAt int64 // ms
	until     int64 // ms, as granted
	tick      int64 // ns, 0 for none
	lockedBy  string
}

func (r record) value() string {
	t := ""
	if r.tick != 0 {
		t = strconv.FormatInt(r.tick, 10)
	}
	return r.owner + "\x00" + strconv.FormatInt(r.grantedAt, 10) + "\x00" + strconv.FormatInt(r.until, 10) + "\x00" + t + "\x00" + r.lockedBy
}

func parseRecord(v []byte) (record, bool) {
	parts := strings.SplitN(string(v), "\x00", 5)
	if len(parts) != 5 {
		return record{}, false
	}
	var r record
	var err error
	r.owner, r.lockedBy = parts[0], parts[4]
	if r.grantedAt, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
		return record{}, false
	}
	if r.until, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return record{}, false
	}
	if parts[3] != "" {
		if r.tick, err = strconv.ParseInt(parts[3], 10, 64); err != nil {
			return record{}, false
		}
	}
	return r, true
}

func tickTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// ttl is d in whole seconds, rounded up: etcd leases have no finer
// resolution, and a lease may outlast its Until but must not end before it.
func ttl(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// op bounds one operation by the provider's timeout.
func (p *Provider) op(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= p.timeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, p.timeout)
}

// wrap prefixes classify's error with the operation.
func wrap(ctx, opCtx context.Context, what string, err error, notSent bool) error {
	return fmt.Errorf("etcd: %s: %w", what, classify(ctx, opCtx, err, notSent))
}

// classify is the one place an etcd client error becomes the provider's.
// The caller's context having ended gives its error. A timeout, a lost
// quorum, a leader change and an unreachable or stopping member give an
// *batontype.UnavailableError, NotSent when nothing can have been applied:
// notSent (the operation failed before its deciding request was sent), a
// request etcd refused before proposing it, or one gRPC never sent for want
// of a connection. Anything else is returned as is (outcome unknown).
//
// opCtx is the operation's bounded context: once its deadline has passed
// the failure is a timeout whatever its text, because the client's and the
// server's timers race (an etcd 3.4 server ending a proposal stuck without
// a leader answers Unknown "context deadline exceeded", which can arrive
// before the client has noticed its own deadline).
func classify(ctx, opCtx context.Context, err error, notSent bool) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	expired := opCtx.Err() != nil
	if dl, ok := opCtx.Deadline(); ok && !time.Now().Before(dl) {
		expired = true
	}
	switch u, definite := unavailable(err); {
	case u:
		return &batontype.UnavailableError{NotSent: notSent || definite, Err: err}
	case expired:
		return &batontype.UnavailableError{NotSent: notSent, Err: err}
	}
	return err
}

// unavailable reports whether err, from the etcd client, says the cluster
// could not be reached or did not answer in time, and whether it also says
// the request was not applied.
func unavailable(err error) (u, notSent bool) {
	if errors.Is(err, context.DeadlineExceeded) {
		return true, false // the client's own deadline (clientv3 returns ctx.Err())
	}
	if e, ok := errors.AsType[rpctypes.EtcdError](rpctypes.Error(err)); ok {
		switch e {
		case rpctypes.ErrTooManyRequests:
			// Refused before it was proposed: the applied index lags.
			return true, true
		case rpctypes.ErrNotCapable:
			return true, false
		}
		// No leader, leader changed, server stopped, request timed out
		// (for any reason), waiting for the applied index, unhealthy.
		return e.Code() == codes.Unavailable, false
	}
	s, ok := status.FromError(err)
	if !ok {
		return false, false
	}
	msg := s.Message()
	switch s.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		// gRPC ends a call that never got a connection with one of these
		// texts; the request was not sent.
		// (etcd retries a transaction only after such a failure, so an
		// earlier attempt was not sent either).
		pending := strings.HasPrefix(msg, "latest balancer error:") ||
			strings.HasSuffix(msg, "while waiting for connections to become ready") ||
			strings.Contains(msg, "transport: Error while dialing") ||
			msg == "grpc: the client connection is closing"
		if s.Code() == codes.Canceled && !pending {
			return false, false // a cancellation the caller's context does not explain
		}
		return true, pending
	case codes.Unknown:
		// A server's own context error, passed through untyped: etcd 3.4
		// ends a proposal that waits for a leader this way.
		return strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "context canceled"), false
	}
	return false, false
}

// grantLeases grants the etcd leases for a lease of atMostFor with an
// at-least bound of atLeastFor: one, or two when the bound needs a shorter
// whole-second TTL. hold is zero when atLeastFor is.
func (p *Provider) grantLeases(ctx context.Context, atMostFor, atLeastFor time.Duration) (lock, hold clientv3.LeaseID, err error) {
	g, err := p.client.Grant(ctx, ttl(atMostFor))
	if err != nil {
		return 0, 0, err
	}
	lock = g.ID
	switch {
	case atLeastFor == 0:
	case ttl(atLeastFor) == ttl(atMostFor):
		hold = lock
	default:
		h, err := p.client.Grant(ctx, ttl(atLeastFor))
		if err != nil {
			p.revoke(ctx, lock, 0)
			return 0, 0, err
		}
		hold = h.ID
	}
	return lock, hold, nil
}

// revoke drops leases granted for an operation that did not use them, so
// refused acquires do not leave leases behind until their TTL. Best effort:
// an unrevoked lease only costs etcd a little memory until it expires.
func (p *Provider) revoke(ctx context.Context, lock, hold clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if lock != 0 {
		_, _ = p.client.Revoke(ctx, lock)
	}
	if hold != 0 && hold != lock {
		_, _ = p.client.Revoke(ctx, hold)
	}
}

// maxAttempts bounds the transactions of one Acquire. A second one is
// needed only the first time a name is acquired with a tick, or (with
// ClockExpiry) to take over a lease whose Until has passed.
const maxAttempts = 4

// Acquire implements lockprovider.Provider. It grants an etcd lease of
// AtMostFor rounded up to whole seconds (and one for AtLeastFor when that
// rounds differently), then decides in one transaction. The token is the
// revision of that transaction.
func (p *Provider) Acquire(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, ap.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return batontype.Lease{}, fmt.Errorf("etcd: acquire: %w", err)
	}
	opCtx, cancel := p.op(ctx)
	defer cancel()

	start := time.Now()
	la, lb, err := p.grantLeases(opCtx, ap.AtMostFor, ap.AtLeastFor)
	if err != nil {
		return batontype.Lease{}, wrap(ctx, opCtx, "acquire: grant lease", err, true)
	}
	granted := start.UnixMilli()
	rec := record{owner: ap.Owner, grantedAt: granted, until: granted + ap.AtMostFor.Milliseconds(), lockedBy: ap.LockedBy}
	atLeast := granted + ap.AtLeastFor.Milliseconds()
	if !ap.Tick.IsZero() {
		rec.tick = ap.Tick.UnixNano()
	}
	k := p.keys(ap.Name)

	// What the previous attempt saw: 0 means absent; a revision means an
	// ended lease (ClockExpiry) to take over only if unchanged.
	var lockRev, holdRev int64
	tickMissing := false
	for range maxAttempts {
		cmps := []clientv3.Cmp{cmpRev(k.lock, lockRev), cmpRev(k.hold, holdRev)}
		if rec.tick != 0 {
			if tickMissing {
				cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k.tick), "=", 0))
			} else {
				cmps = append(cmps, clientv3.Compare(clientv3.Value(k.tick), "<", tick(rec.tick)))
			}
		}
		then := []clientv3.Op{
			clientv3.OpPut(k.lock, lockValue(ap.Owner, rec.until, atLeast), clientv3.WithLease(la)),
			clientv3.OpPut(k.rec, rec.value()),
		}
		switch {
		case lb != 0:
			then = append(then, clientv3.OpPut(k.hold, ms(atLeast), clientv3.WithLease(lb)))
		case holdRev != 0:
			then = append(then, clientv3.OpDelete(k.hold))
		}
		if rec.tick != 0 {
			then = append(then, clientv3.OpPut(k.tick, tick(rec.tick)))
		}
		els := []clientv3.Op{clientv3.OpGet(k.lock), clientv3.OpGet(k.hold), clientv3.OpGet(k.rec)}
		if rec.tick != 0 {
			els = append(els, clientv3.OpGet(k.tick))
		}
		resp, err := p.client.Txn(opCtx).If(cmps...).Then(then...).Else(els...).Commit()
		if err != nil {
			return batontype.Lease{}, wrap(ctx, opCtx, "acquire", err, false)
		}
		if resp.Succeeded {
			return rec.lease(ap.Name, resp.Header.Revision, atLeast), nil
		}

		now := time.Now().UnixMilli()
		lockKV, holdKV, recKV := first(resp, 0), first(resp, 1), first(resp, 2)
		lockRev, holdRev = 0, 0
		if lockKV != nil {
			owner, until, atLeastUntil, _ := parseLock(lockKV.Value)
			if owner == ap.Owner && until > now && recKV != nil {
				// A repeat by the holder: the same grant.
				p.revoke(ctx, la, lb)
				if r, ok := parseRecord(recKV.Value); ok {
					r.until = until // Extend may have moved it
					return r.lease(ap.Name, recKV.ModRevision, atLeastUntil), nil
				}
			}
			if !p.clock || until > now {
				p.revoke(ctx, la, lb)
				return batontype.Lease{}, batontype.ErrNotAcquired
			}
			lockRev = lockKV.ModRevision
		}
		if holdKV != nil {
			until, _ := strconv.ParseInt(string(holdKV.Value), 10, 64)
			if !p.clock || until > now {
				p.revoke(ctx, la, lb)
				return batontype.Lease{}, batontype.ErrNotAcquired
			}
			holdRev = holdKV.ModRevision
		}
		if rec.tick != 0 {
			tickKV := first(resp, 3)
			tickMissing = tickKV == nil
			if !tickMissing && string(tickKV.Value) >= tick(rec.tick) {
				p.revoke(ctx, la, lb)
				return batontype.Lease{}, batontype.ErrStaleTick
			}
		}
	}
	// Every attempt lost a race with other writers of the name; the last
	// of them holds it.
	p.revoke(ctx, la, lb)
	return batontype.Lease{}, batontype.ErrNotAcquired
}

func cmpRev(key string, rev int64) clientv3.Cmp {
	if rev == 0 {
		return clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	}
	return clientv3.Compare(clientv3.ModRevision(key), "=", rev)
}

// first returns the first key-value of the i-th range response, or nil.
func first(resp *clientv3.TxnResponse, i int) *mvccpb.KeyValue {
	if i >= len(resp.Responses) {
		return nil
	}
	r := resp.Responses[i].GetResponseRange()
	if r == nil || len(r.Kvs) == 0 {
		return nil
	}
	return r.Kvs[0]
}

func (r record) lease(name string, token, atLeast int64) batontype.Lease {
	return batontype.Lease{
		Name: name, Owner: r.owner, Token: token,
		GrantedAt: time.UnixMilli(r.grantedAt), Until: time.UnixMilli(r.until),
		AtLeastUntil: time.UnixMilli(atLeast), Tick: tickTime(r.tick),
	}
}

// ownerCmps match a lock key held by owner; with live, also one whose Until
// has not passed at now.
func ownerCmps(key, owner string, live bool, now int64) []clientv3.Cmp {
	low := owner + "\x00"
	if live {
		low += ms(now)
	}
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.Value(key), ">", low),
		clientv3.Compare(clientv3.Value(key), "<", owner+"\x01"),
	}
}

// Extend implements lockprovider.Provider: new etcd leases for the new
// lengths, and one transaction that moves the lease onto them if the owner
// still holds it and its Until has not passed.
func (p *Provider) Extend(ctx context.Context, ep lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, ep.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return batontype.Lease{}, fmt.Errorf("etcd: extend: %w", err)
	}
	opCtx, cancel := p.op(ctx)
	defer cancel()
	start := time.Now()
	la, lb, err := p.grantLeases(opCtx, ep.AtMostFor, ep.AtLeastFor)
	if err != nil {
		return batontype.Lease{}, wrap(ctx, opCtx, "extend: grant lease", err, true)
	}
	now := start.UnixMilli()
	until, atLeast := now+ep.AtMostFor.Milliseconds(), now+ep.AtLeastFor.Milliseconds()
	k := p.keys(ep.Name)
	then := []clientv3.Op{
		clientv3.OpGet(k.rec),
		clientv3.OpPut(k.lock, lockValue(ep.Owner, until, atLeast), clientv3.WithLease(la)),
	}
	if lb != 0 {
		then = append(then, clientv3.OpPut(k.hold, ms(atLeast), clientv3.WithLease(lb)))
	} else {
		then = append(then, clientv3.OpDelete(k.hold))
	}
	resp, err := p.client.Txn(opCtx).If(ownerCmps(k.lock, ep.Owner, true, now)...).Then(then...).Commit()
	if err != nil {
		return batontype.Lease{}, wrap(ctx, opCtx, "extend", err, false)
	}
	if !resp.Succeeded {
		p.revoke(ctx, la, lb)
		return batontype.Lease{}, batontype.ErrNotHeld
	}
	recKV := first(resp, 0)
	r, ok := record{}, false
	if recKV != nil {
		r, ok = parseRecord(recKV.Value)
	}
	if !ok {
		return batontype.Lease{}, fmt.Errorf("etcd: extend: record of %q missing or malformed", ep.Name)
	}
	r.until = until
	return r.lease(ep.Name, recKV.ModRevision, atLeast), nil
}

// Release implements lockprovider.Provider in one transaction: it deletes
// the lock key if the owner holds it, and the at-least key if that bound
// has passed. A lease whose Until has passed but which etcd has not ended
// yet (its TTL was rounded up) is deleted too, and reported as ErrNotHeld:
// it was no longer the caller's to rely on.
func (p *Provider) Release(ctx context.Context, rp lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, rp.Validate()); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etcd: release: %w", err)
	}
	opCtx, cancel := p.op(ctx)
	defer cancel()
	k := p.keys(rp.Name)
	now := time.Now().UnixMilli()
	resp, err := p.client.Txn(opCtx).If(ownerCmps(k.lock, rp.Owner, false, 0)...).Then(
		clientv3.OpDelete(k.lock, clientv3.WithPrevKV()),
		clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Value(k.hold), "<", ms(now))},
			[]clientv3.Op{clientv3.OpDelete(k.hold)}, nil),
	).Commit()
	if err != nil {
		return wrap(ctx, opCtx, "release", err, false)
	}
	if !resp.Succeeded {
		return batontype.ErrNotHeld
	}
	if d := resp.Responses[0].GetResponseDeleteRange(); d != nil && len(d.PrevKvs) > 0 {
		if _, until, _, ok := parseLock(d.PrevKvs[0].Value); ok && until <= now {
			return batontype.ErrNotHeld
		}
	}
	return nil
}
