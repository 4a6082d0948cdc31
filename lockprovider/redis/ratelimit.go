package redis

import (
	"context"
	_ "embed"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

// The general script decides any request; the one-limit scripts, used for
// the common single-limit decision, do the same arithmetic with less work
// on the server (no per-limit tables, fewer arguments). They share state
// formats, so both may act on the same keys.
var (
	//go:embed rate.lua
	rateSrc string
	//go:embed rate_fw.lua
	rateFWSrc string
	//go:embed rate_sl.lua
	rateSLSrc string
	//go:embed rate_sw.lua
	rateSWSrc string
	//go:embed rate_tb.lua
	rateTBSrc string
	//go:embed rate_gcra.lua
	rateGCRASrc string
)

// The scripts are shared by every Provider: a script is identified by its
// SHA1 only, and they have no per-provider text.
var (
	rateScript    = goredis.NewScript(rateSrc)
	rateOneScript = [...]*goredis.Script{
		batontype.FixedWindow:   goredis.NewScript(rateFWSrc),
		batontype.SlidingLog:    goredis.NewScript(rateSLSrc),
		batontype.SlidingWindow: goredis.NewScript(rateSWSrc),
		batontype.TokenBucket:   goredis.NewScript(rateTBSrc),
		batontype.GCRA:          goredis.NewScript(rateGCRASrc),
	}
)

// RateLimit implements lockprovider.RateLimiter with one EVALSHA of
// rate.lua (EVAL once after the server lost its script cache). The
// decision uses the server's TIME. Each limit's state is one key,
//
//	<prefix>rl:{<key>}:<limit id>
//
// (a string, or a sorted set for the sliding log), so all state of a key
// shares one hash slot and Redis Cluster runs the script on one node. Every
// key written gets a PX expiry at the instant its limit is full again, so
// nothing outlives its use.
//
// The scripts read TIME and then write, which needs script effects
// replication: the default since Redis 5, the only mode since 7 (and in
// Valkey). They never call redis.replicate_commands, which some managed
// services reject.
func (p *Provider) RateLimit(ctx context.Context, r lockprovider.RateRequest) (lockprovider.RateResult, error) {
	if err := check.Args(ctx, r.Validate()); err != nil {
		return lockprovider.RateResult{}, err
	}
	script, keys, args := rateArgs(p.prefix, r)
	v, err := script.Run(ctx, p.client, keys, args...).Int64Slice()
	if err != nil {
		return lockprovider.RateResult{}, opError("rate limit", r.Key, err)
	}
	return ratewire.Decode(v, len(r.Limits))
}

// rateArgs picks the script and builds its KEYS and ARGV.
func rateArgs(prefix string, r lockprovider.RateRequest) (*goredis.Script, []string, []any) {
	key := r.Key
	if strings.ContainsAny(key, "%}") {
		// Keep the hash tag exactly the key, and keys distinct.
		key = strings.NewReplacer("%", "%25", "}", "%7D").Replace(key)
	}
	var buf [256]byte
	b := append(append(append(buf[:0], prefix...), "rl:{"...), key...)
	b = append(b, "}:"...)
	base := len(b)
	keyOf := func(l batontype.RateLimit) string {
		b = ratewire.AppendID(b[:base], l)
		return string(b)
	}
	maxd := int64(r.MaxDelay / time.Microsecond)
	if len(r.Limits) == 1 && !r.Refund {
		l := r.Limits[0]
		keys := []string{keyOf(l)}
		if l.Algorithm.Reservable() {
			p, q := ratewire.Reduced(l)
			return rateOneScript[l.Algorithm], keys, []any{r.N, maxd, l.Capacity() * p, p, q}
		}
		return rateOneScript[l.Algorithm], keys, []any{r.N, l.Rate, int64(l.Period / time.Microsecond)}
	}
	keys := make([]string, len(r.Limits))
	args := make([]any, 3, 3+6*len(r.Limits))
	args[0] = r.N
	args[1] = maxd
	args[2] = 0
	if r.Refund {
		args[2] = 1
	}
	for i, l := range r.Limits {
		keys[i] = keyOf(l)
		p, q := ratewire.Reduced(l)
		args = append(args, int(l.Algorithm), l.Rate, int64(l.Period/time.Microsecond), l.Capacity(), p, q)
	}
	return rateScript, keys, args
}
