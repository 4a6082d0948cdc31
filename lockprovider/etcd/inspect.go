package etcd

import (
	"context"

	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/lockprovider"
)

// Inspect implements lockprovider.Inspector with one read-only transaction.
func (p *Provider) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	opCtx, cancel := p.op(ctx)
	defer cancel()
	k := p.keys(name)
	resp, err := p.client.Txn(opCtx).Then(
		clientv3.OpGet(k.lock), clientv3.OpGet(k.hold), clientv3.OpGet(k.rec), clientv3.OpGet(k.tick),
	).Commit()
	if err != nil {
		return batontype.LeaseInfo{}, wrap(ctx, opCtx, "inspect", err, false)
	}
	return p.info(name, first(resp, 0), first(resp, 1), first(resp, 2), first(resp, 3), time.Now().UnixMilli()), nil
}

// List implements lockprovider.Inspector with one read-only transaction
// over the provider's prefix.
func (p *Provider) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	opCtx, cancel := p.op(ctx)
	defer cancel()
	dirs := []string{lockDir, holdDir, recDir, tickDir}
	ops := make([]clientv3.Op, len(dirs))
	for i, d := range dirs {
		ops[i] = clientv3.OpGet(p.prefix+d, clientv3.WithPrefix())
	}
	resp, err := p.client.Txn(opCtx).Then(ops...).Commit()
	if err != nil {
		return nil, wrap(ctx, opCtx, "list", err, false)
	}
	byName := map[string]*[4]*mvccpb.KeyValue{}
	for i, d := range dirs {
		for _, kv := range resp.Responses[i].GetResponseRange().GetKvs() {
			name := strings.TrimPrefix(string(kv.Key), p.prefix+d)
			e := byName[name]
			if e == nil {
				e = new([4]*mvccpb.KeyValue)
				byName[name] = e
			}
			e[i] = kv
		}
	}
	now := time.Now().UnixMilli()
	out := make([]batontype.LeaseInfo, 0, len(byName))
	for name, e := range byName {
		out = append(out, p.info(name, e[0], e[1], e[2], e[3], now))
	}
	slices.SortFunc(out, func(a, b batontype.LeaseInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (p *Provider) info(name string, lock, hold, rec, tk *mvccpb.KeyValue, now int64) batontype.LeaseInfo {
	info := batontype.LeaseInfo{Name: name, Exists: lock != nil || hold != nil || rec != nil || tk != nil}
	if rec != nil {
		if r, ok := parseRecord(rec.Value); ok {
			info.LockedBy, info.GrantedAt, info.Until = r.lockedBy, time.UnixMilli(r.grantedAt), time.UnixMilli(r.until)
		}
		info.Token = rec.ModRevision
	}
	if lock != nil {
		if _, until, _, ok := parseLock(lock.Value); ok {
			info.Until = time.UnixMilli(until)
			info.Held = !p.clock || until > now
		}
	}
	if hold != nil {
		until, err := strconv.ParseInt(string(hold.Value), 10, 64)
		if err == nil {
			info.AtLeastUntil = lockprovider.MinHold(info.GrantedAt, time.UnixMilli(until))
		}
		if !info.Held {
			info.Held = err == nil && (!p.clock || until > now)
		}
	}
	if tk != nil {
		if ns, err := strconv.ParseInt(string(tk.Value), 10, 64); err == nil {
			info.LastTick = tickTime(ns)
		}
	}
	return info
}
