package history

import (
	"context"
	"errors"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
)

// Provider returns p with every Acquire, Extend and Release (and, when p
// is a lockprovider.Admin, ForceRelease; when p is a lockprovider.Inspector,
// each Inspect that answered) recorded in h as made by client.
// The returned provider is a lockprovider.ReleaseNotifier when p is one,
// so a Locker over it waits the same way; it has no other capability.
// Calls that fail validation or are known not to have reached the backend
// change nothing and are not recorded.
func (h *History) Provider(p lockprovider.Provider, client int) lockprovider.Provider {
	r := &recorder{h: h, p: p, client: client}
	if n, ok := p.(lockprovider.ReleaseNotifier); ok {
		return &notifier{recorder: r, n: n}
	}
	return r
}

// ForceReleaser is the recorded provider's force-release, available when
// the recorded provider is a lockprovider.Admin.
type ForceReleaser interface {
	ForceRelease(ctx context.Context, p lockprovider.ForceReleaseParams) (batontype.LeaseInfo, error)
}

type recorder struct {
	h      *History
	p      lockprovider.Provider
	client int
}

type notifier struct {
	*recorder
	n lockprovider.ReleaseNotifier
}

func (n *notifier) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	return n.n.NotifyRelease(ctx, name, ch)
}

// result classifies err; ok is false for an error that changed nothing
// and is not worth recording (bad input, a request never sent).
func result(err error) (r Result, ok bool) {
	switch {
	case err == nil:
		return OK, true
	case errors.Is(err, batontype.ErrNotAcquired):
		return NotAcquired, true
	case errors.Is(err, batontype.ErrNotHeld):
		return NotHeld, true
	case errors.Is(err, batontype.ErrStaleTick):
		return StaleTick, true
	case errors.Is(err, batontype.ErrInvalid), batontype.NotSent(err):
		return 0, false
	}
	return Unknown, true
}

func (r *recorder) record(op Op, call time.Time, err error, l batontype.Lease) {
	res, ok := result(err)
	if !ok {
		return
	}
	op.Client, op.Call, op.Return, op.Result = r.client, r.h.At(call), r.h.Now(), res
	if res == Unknown {
		op.Err = err.Error()
	}
	if res == OK && (op.Kind == Acquire || op.Kind == Extend) {
		op.Lease = r.h.grant(l)
	}
	r.h.Add(op)
}

func (r *recorder) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	call := time.Now()
	l, err := r.p.Acquire(ctx, p)
	op := Op{Kind: Acquire, Name: p.Name, Owner: p.Owner, AtMostFor: p.AtMostFor, AtLeastFor: p.AtLeastFor}
	if !p.Tick.IsZero() {
		op.Tick = r.h.server(p.Tick)
	}
	r.record(op, call, err, l)
	return l, err
}

func (r *recorder) Extend(ctx context.Context, p lockprovider.ExtendParams) (batontype.Lease, error) {
	call := time.Now()
	l, err := r.p.Extend(ctx, p)
	r.record(Op{Kind: Extend, Name: p.Name, Owner: p.Owner, AtMostFor: p.AtMostFor, AtLeastFor: p.AtLeastFor}, call, err, l)
	return l, err
}

func (r *recorder) Release(ctx context.Context, p lockprovider.ReleaseParams) error {
	call := time.Now()
	err := r.p.Release(ctx, p)
	r.record(Op{Kind: Release, Name: p.Name, Owner: p.Owner}, call, err, batontype.Lease{})
	return err
}

// ForceRelease records an Admin.ForceRelease; without Admin it returns an
// error matching batontype.ErrInvalid.
func (r *recorder) ForceRelease(ctx context.Context, p lockprovider.ForceReleaseParams) (batontype.LeaseInfo, error) {
	a, ok := r.p.(lockprovider.Admin)
	if !ok {
		return batontype.LeaseInfo{}, batontype.Invalid("provider", "", "is not a lockprovider.Admin", batontype.ErrInvalid)
	}
	call := time.Now()
	info, err := a.ForceRelease(ctx, p)
	op := Op{Kind: ForceRelease, Name: p.Name, Cond: p.Token}
	res, ok := result(err)
	if !ok {
		return info, err
	}
	op.Client, op.Call, op.Return, op.Result = r.client, r.h.At(call), r.h.Now(), res
	if res == Unknown {
		op.Err = err.Error()
	}
	if res == OK {
		op.Lease = Grant{Token: info.Token}
	}
	r.h.Add(op)
	return info, err
}

// Inspector is the recorded provider's read of one name, available when
// the recorded provider is a lockprovider.Inspector.
type Inspector interface {
	Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error)
}

// Inspect records a lockprovider.Inspector's Inspect that answered (a
// failed read tells nothing); without Inspector it returns an error
// matching batontype.ErrInvalid.
func (r *recorder) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	in, ok := r.p.(lockprovider.Inspector)
	if !ok {
		return batontype.LeaseInfo{}, batontype.Invalid("provider", "", "is not a lockprovider.Inspector", batontype.ErrInvalid)
	}
	call := time.Now()
	info, err := in.Inspect(ctx, name)
	if err != nil {
		return info, err
	}
	op := Op{Kind: Inspect, Name: name, Client: r.client, Call: r.h.At(call), Return: r.h.Now(), Result: OK, Held: info.Held}
	if info.Held {
		op.Lease = Grant{Token: info.Token}
	}
	r.h.Add(op)
	return info, nil
}
