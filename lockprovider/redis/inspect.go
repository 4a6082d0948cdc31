package redis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/lockprovider"
)

// Inspect implements lockprovider.Inspector in one script call.
func (p *Provider) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	lease, fence := p.keys(name)
	v, err := p.inspect.Run(ctx, p.client, []string{lease, fence, p.tickKey(lease)}).Slice()
	if err != nil {
		return batontype.LeaseInfo{}, opError("inspect", name, err)
	}
	info := batontype.LeaseInfo{Name: name}
	if len(v) != 4 {
		return info, fmt.Errorf("redis: inspect %q: %w", name, unexpected(v))
	}
	if s, ok := v[0].(string); ok {
		until, ok := keyspace.Int(v[1])
		lv, ok2 := parseLease(s, until)
		if !ok || !ok2 {
			return info, fmt.Errorf("redis: inspect %q: %w", name, unexpected(v))
		}
		info.Exists, info.Held = true, true
		info.LockedBy, info.GrantedAt, info.Until = lv.lockedBy, lv.granted, time.UnixMilli(until)
		info.AtLeastUntil = lockprovider.MinHold(lv.granted, lv.atLeastUntil)
	}
	if f, ok := keyspace.Int(v[2]); ok {
		info.Exists, info.Token = true, f
	}
	if k, ok := keyspace.Int(v[3]); ok {
		info.Exists, info.LastTick = true, time.UnixMilli(k)
	}
	return info, nil
}

// List implements lockprovider.Inspector. It SCANs every master (or shard)
// for the provider's keys and inspects each name: O(keys under the prefix)
// work on the server and one round trip per name. Meant for operators, not
// for hot paths.
func (p *Provider) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	keys, err := p.scanKeys(ctx, globEscape(p.prefix)+"{*")
	if err != nil {
		return nil, opError("list", "", err)
	}
	var names []string
	seen := make(map[string]bool)
	for _, k := range keys {
		if name, ok := p.nameOf(k); ok && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	out := make([]batontype.LeaseInfo, 0, len(names))
	for _, name := range names {
		info, err := p.Inspect(ctx, name)
		if err != nil {
			return nil, err
		}
		if info.Exists { // it may have expired since the scan
			out = append(out, info)
		}
	}
	return out, nil
}

type scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *goredis.ScanCmd
}

// forEachSerial runs scan on every node of each. go-redis calls the
// callbacks concurrently, so they are serialised here.
func forEachSerial(ctx context.Context,
	each func(context.Context, func(context.Context, *goredis.Client) error) error,
	scan func(context.Context, scanner) error) error {
	var mu sync.Mutex
	return each(ctx, func(ctx context.Context, c *goredis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		return scan(ctx, c)
	})
}

// globEscape quotes the SCAN MATCH metacharacters in s.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
