package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/lockprovider"
)

// Acquire implements lockprovider.Provider in one script call.
func (p *Provider) Acquire(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, ap.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	lease, fence := p.keys(ap.Name)
	var tick int64
	if !ap.Tick.IsZero() {
		tick = ap.Tick.UnixMilli()
	}
	atMost, atLeast := ap.AtMostFor.Milliseconds(), ap.AtLeastFor.Milliseconds()
	value := leaseValue(ap.Owner, ap.LockedBy, atMost, atLeast, tick)
	var cmd *goredis.Cmd
	if tick == 0 {
		cmd = p.acquire.Run(ctx, p.client, []string{lease, fence}, value, atMost, p.recordTTLArg)
	} else {
		cmd = p.acquireTick.Run(ctx, p.client, []string{lease, fence, p.tickKey(lease)},
			value, atMost, p.recordTTLArg, tick)
	}
	return acquireReply(cmd, ap, tick, atMost, atLeast)
}

// acquireReply decodes the reply of an acquire script (also the ledger's,
// which wraps them).
func acquireReply(cmd *goredis.Cmd, ap lockprovider.AcquireParams, tick, atMost, atLeast int64) (batontype.Lease, error) {
	v, err := cmd.Result()
	if err != nil {
		return batontype.Lease{}, unknown("acquire", ap.Name, err)
	}
	return decodeAcquire(v, ap, tick, atMost, atLeast)
}

// decodeAcquire decodes one acquire script's answer (also one item of a
// batch's, see batch.go).
func decodeAcquire(v any, ap lockprovider.AcquireParams, tick, atMost, atLeast int64) (batontype.Lease, error) {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return batontype.Lease{}, batontype.ErrStaleTick
		}
		return batontype.Lease{}, batontype.ErrNotAcquired
	case []any:
		if len(v) == 2 { // a new grant: {fence, expiry}
			f, ok1 := v[0].(int64)
			until, ok2 := v[1].(int64)
			if ok1 && ok2 {
				granted := until - atMost
				l := batontype.Lease{
					Name: ap.Name, Owner: ap.Owner, Token: f,
					GrantedAt:    time.UnixMilli(granted),
					Until:        time.UnixMilli(until),
					AtLeastUntil: time.UnixMilli(granted + atLeast),
				}
				if tick != 0 {
					l.Tick = time.UnixMilli(tick)
				}
				return l, nil
			}
		} else if l, ok := heldReply(v, ap.Name, ap.Owner); ok {
			return l, nil
		}
	}
	return batontype.Lease{}, unknown("acquire", ap.Name, unexpected(v))
}

// Extend implements lockprovider.Provider in one script call.
func (p *Provider) Extend(ctx context.Context, ep lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, ep.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	lease, fence := p.keys(ep.Name)
	v, err := p.extend.Run(ctx, p.client, []string{lease, fence}, ep.Owner,
		ep.AtMostFor.Milliseconds(), ep.AtLeastFor.Milliseconds()).Result()
	if err != nil {
		return batontype.Lease{}, unknown("extend", ep.Name, err)
	}
	if v == int64(0) {
		return batontype.Lease{}, batontype.ErrNotHeld
	}
	if a, ok := v.([]any); ok {
		if l, ok := heldReply(a, ep.Name, ep.Owner); ok {
			return l, nil
		}
	}
	return batontype.Lease{}, unknown("extend", ep.Name, unexpected(v))
}

// Release implements lockprovider.Provider in one script call. go-redis
// resends a command whose reply timed out (Options.MaxRetries); a resent
// release that had already succeeded reports ErrNotHeld.
func (p *Provider) Release(ctx context.Context, rp lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, rp.Validate()); err != nil {
		return err
	}
	n, err := p.release.Run(ctx, p.client, []string{p.key(rp.Name)}, rp.Owner).Int64()
	switch {
	case err != nil:
		return unknown("release", rp.Name, err)
	case n == 0:
		return batontype.ErrNotHeld
	}
	return nil
}

// unknown wraps a failed call (see opError).
func unknown(op, name string, err error) error { return opError(op, name, err) }

func unexpected(v any) error {
	return errors.New("unexpected script reply " + strconv.Quote(fmt.Sprint(v)))
}

// heldReply decodes {fence, lease value, expiry ms} of a lease in force.
func heldReply(v []any, name, owner string) (batontype.Lease, bool) {
	if len(v) != 3 {
		return batontype.Lease{}, false
	}
	f, ok1 := keyspace.Int(v[0])
	s, ok2 := v[1].(string)
	until, ok3 := keyspace.Int(v[2])
	if !ok1 || !ok2 || !ok3 {
		return batontype.Lease{}, false
	}
	pl, ok := parseLease(s, until)
	if !ok || pl.owner != owner {
		return batontype.Lease{}, false
	}
	return batontype.Lease{
		Name: name, Owner: owner, Token: f,
		GrantedAt:    pl.granted,
		Until:        time.UnixMilli(until),
		AtLeastUntil: pl.atLeastUntil,
		Tick:         pl.tick,
	}, true
}
