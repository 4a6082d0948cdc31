package shedlock

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/lockprovider"
)

// RedisClient is the part of go-redis the provider uses. *goredis.Client
// (including Sentinel failover clients), *goredis.ClusterClient and
// *goredis.Ring satisfy it.
type RedisClient interface {
	goredis.Scripter
	// Scan lists ShedLock's keys for List.
	Scan(ctx context.Context, cursor uint64, match string, count int64) *goredis.ScanCmd
}

// ShedLock's defaults for its Redis providers.
const (
	DefaultKeyPrefix   = "job-lock"
	DefaultEnvironment = "default"
	// DefaultRecordTTL is the lifetime of the hash that keeps a name's
	// owner, fencing token and newest tick, renewed by every Go grant.
	DefaultRecordTTL = 30 * 24 * time.Hour
)

// RedisConfig configures a Redis provider. The zero value means ShedLock's
// defaults.
type RedisConfig struct {
	// KeyPrefix and Environment are ShedLock's keyPrefix and environment
	// (defaults "job-lock" and "default"): the key of a lock is
	// "<KeyPrefix>:<Environment>:<name>".
	KeyPrefix   string
	Environment string

	// LockedBy is written into the value ("ADDED:<time>@<LockedBy>:<owner>")
	// when AcquireParams.LockedBy is empty. Defaults to the host name.
	LockedBy string

	// RecordTTL is the lifetime of baton's hash next to each key (owner,
	// fencing token, newest tick), renewed by every Go grant. A tick more
	// than RecordTTL late could be granted again. Default
	// DefaultRecordTTL; at least one hour.
	RecordTTL time.Duration

	// PollInterval is how often NotifyRelease reads the awaited names.
	// Defaults to DefaultPollInterval.
	PollInterval time.Duration

	// Logger receives failures of the NotifyRelease poll. Nil discards.
	Logger *slog.Logger
}

// Redis is a lockprovider.Provider on the keys of ShedLock's Redis
// providers (RedisLockProvider, JedisLockProvider, LettuceLockProvider),
// sharing their locks with the Java replicas. It also implements
// lockprovider.Inspector and lockprovider.ReleaseNotifier. It is safe for
// concurrent use; it never closes the client.
type Redis struct {
	client    RedisClient
	base      string // "<prefix>:<env>:"
	lockedBy  string
	recordTTL int64 // ms
	poll      *poller

	acquire, extend, release, inspect *goredis.Script
}

var (
	_ lockprovider.Provider        = (*Redis)(nil)
	_ lockprovider.Inspector       = (*Redis)(nil)
	_ lockprovider.ReleaseNotifier = (*Redis)(nil)
)

var (
	//go:embed lua/acquire.lua
	acquireLua string
	//go:embed lua/extend.lua
	extendLua string
	//go:embed lua/release.lua
	releaseLua string
	//go:embed lua/inspect.lua
	inspectLua string
)

// NewRedis returns a provider on ShedLock's keys in the Redis behind
// client. It makes no network call. A nil config means every field's
// default. NewRedis copies config.
func NewRedis(client RedisClient, config *RedisConfig) (*Redis, error) {
	var cfg RedisConfig // nil config: every field at its default
	if config != nil {
		cfg = *config
	}
	if client == nil {
		return nil, &batontype.ValidationError{Pkg: "shedlock", Field: "client", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = DefaultKeyPrefix
	}
	if cfg.Environment == "" {
		cfg.Environment = DefaultEnvironment
	}
	for _, f := range []struct{ field, v string }{{"KeyPrefix", cfg.KeyPrefix}, {"Environment", cfg.Environment}} {
		if err := validateKeyPart(f.field, f.v); err != nil {
			return nil, err
		}
	}
	var err error
	if cfg.RecordTTL, err = defaults.RecordTTL(cfg.RecordTTL, DefaultRecordTTL); err != nil {
		return nil, err
	}
	if cfg.PollInterval, err = pollInterval(cfg.PollInterval); err != nil {
		return nil, err
	}
	cfg.Logger = defaults.Logger(cfg.Logger)
	lockedBy, err := lockedByOf(cfg.LockedBy)
	if err != nil {
		return nil, err
	}
	r := &Redis{
		client:    client,
		base:      cfg.KeyPrefix + ":" + cfg.Environment + ":",
		lockedBy:  lockedBy,
		recordTTL: cfg.RecordTTL.Milliseconds(),
		acquire:   goredis.NewScript(acquireLua),
		extend:    goredis.NewScript(extendLua),
		release:   goredis.NewScript(releaseLua),
		inspect:   goredis.NewScript(inspectLua),
	}
	r.poll = newPoller(cfg.PollInterval, r.states, cfg.Logger)
	return r, nil
}

func validateKeyPart(field, s string) error {
	reason := ""
	if len(s) > 100 {
		reason = "is longer than 100 bytes"
	}
	for _, c := range s {
		if !unicode.IsPrint(c) || c == ' ' {
			reason = "contains a space or a non-printable character"
			break
		}
	}
	if reason == "" {
		return nil
	}
	return &batontype.ValidationError{Pkg: "shedlock", Field: field, Value: strconv.Quote(s), Reason: reason, Err: batontype.ErrInvalid}
}

// Key returns ShedLock's key of name: "<KeyPrefix>:<Environment>:<name>".
func (r *Redis) Key(name string) string { return r.base + name }

// keys returns ShedLock's key and baton's hash key, which must hash to the
// same Redis Cluster slot for one script to touch both.
func (r *Redis) keys(name string) (key, meta string) {
	key = r.Key(name)
	return key, metaKey(key)
}

// metaKey names baton's hash of ShedLock key k in k's slot. Redis hashes
// only the first "{…}" of a key when it is non-empty, else the whole key.
func metaKey(k string) string {
	if i := strings.IndexByte(k, '{'); i >= 0 {
		if j := strings.IndexByte(k[i+1:], '}'); j > 0 {
			return k + ":baton" // k's own tag decides, and still does
		}
	}
	if !strings.Contains(k, "}") {
		return "{" + k + "}:baton" // the tag is all of k
	}
	// A '}' without a tag before it: no tag can spell k, so pick a short
	// one with the same slot (found within a few tens of thousands of
	// tries; such names are rare).
	slot := crc16(k) % 16384
	for i := 0; ; i++ {
		if tag := "b" + strconv.Itoa(i); crc16(tag)%16384 == slot {
			return "{" + tag + "}:baton:" + k
		}
	}
}

// crc16 is the CRC-16/XMODEM of Redis Cluster key hashing.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func ms(t int64) time.Time { return time.UnixMilli(t) }

// Acquire implements lockprovider.Provider in one script call.
func (r *Redis) Acquire(ctx context.Context, a lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	var tick int64
	if !a.Tick.IsZero() {
		tick = a.Tick.UnixMilli()
	}
	key, meta := r.keys(a.Name)
	v, err := r.acquire.Run(ctx, r.client, []string{key, meta}, a.Owner, infoOf(a, r.lockedBy),
		a.AtMostFor.Milliseconds(), a.AtLeastFor.Milliseconds(), tick, r.recordTTL).Int64Slice()
	if err != nil {
		return batontype.Lease{}, redisError("acquire", a.Name, err)
	}
	switch {
	case len(v) == 1 && v[0] == 0:
		return batontype.Lease{}, batontype.ErrNotAcquired
	case len(v) == 1 && v[0] == -1:
		return batontype.Lease{}, batontype.ErrStaleTick
	case len(v) != 6:
		return batontype.Lease{}, fmt.Errorf("shedlock: acquire %q: unexpected reply %v", a.Name, v)
	}
	l := batontype.Lease{
		Name: a.Name, Owner: a.Owner, Token: v[4],
		GrantedAt: ms(v[1]), Until: ms(v[2]), AtLeastUntil: ms(v[3]),
	}
	if tick != 0 && v[5] != 0 {
		l.Tick = ms(v[5])
	}
	return l, nil
}

// Extend implements lockprovider.Provider in one script call.
func (r *Redis) Extend(ctx context.Context, e lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, e.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	key, meta := r.keys(e.Name)
	res, err := r.extend.Run(ctx, r.client, []string{key, meta}, e.Owner,
		e.AtMostFor.Milliseconds(), e.AtLeastFor.Milliseconds()).Result()
	if err != nil {
		return batontype.Lease{}, redisError("extend", e.Name, err)
	}
	vs, ok := res.([]any)
	if !ok {
		return batontype.Lease{}, batontype.ErrNotHeld
	}
	v := make([]int64, len(vs))
	for i, x := range vs {
		v[i], _ = x.(int64)
	}
	if len(v) != 5 {
		return batontype.Lease{}, fmt.Errorf("shedlock: extend %q: unexpected reply %v", e.Name, res)
	}
	l := batontype.Lease{Name: e.Name, Owner: e.Owner, Token: v[3], GrantedAt: ms(v[0]), Until: ms(v[1]), AtLeastUntil: ms(v[2])}
	if v[4] != 0 {
		l.Tick = ms(v[4])
	}
	return l, nil
}

// Release implements lockprovider.Provider in one script call.
func (r *Redis) Release(ctx context.Context, p lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, p.Validate()); err != nil {
		return err
	}
	key, meta := r.keys(p.Name)
	n, err := r.release.Run(ctx, r.client, []string{key, meta}, p.Owner).Int64()
	if err != nil {
		return redisError("release", p.Name, err)
	}
	if n == 0 {
		return batontype.ErrNotHeld
	}
	return nil
}

// Inspect implements lockprovider.Inspector. A Java grant reports the
// Java host and the time from its value, and the fencing token of the last
// Go grant (0 if none).
func (r *Redis) Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, batontype.ValidateName(name)); err != nil {
		return batontype.LeaseInfo{}, err
	}
	info, err := r.read(ctx, name)
	if err != nil {
		return batontype.LeaseInfo{}, redisError("inspect", name, err)
	}
	return info, nil
}

func (r *Redis) read(ctx context.Context, name string) (batontype.LeaseInfo, error) {
	key, meta := r.keys(name)
	vs, err := r.inspect.Run(ctx, r.client, []string{key, meta}).Slice()
	if err != nil {
		return batontype.LeaseInfo{}, err
	}
	if len(vs) != 6 {
		return batontype.LeaseInfo{}, fmt.Errorf("unexpected reply %v", vs)
	}
	str := func(i int) string { s, _ := vs[i].(string); return s }
	num := func(i int) int64 { n, _ := strconv.ParseInt(str(i), 10, 64); return n }
	info := batontype.LeaseInfo{Name: name, Token: num(4)}
	if t := num(5); t != 0 {
		info.LastTick = ms(t)
	}
	value := str(0)
	if value == "" {
		info.Exists = info.Token != 0
		return info, nil
	}
	exp, _ := vs[1].(int64)
	info.Exists, info.Held, info.Until = true, true, ms(exp)
	// "ADDED:<time>@<locked by>:<id>"
	rest, _ := strings.CutPrefix(value, "ADDED:")
	at, holder, _ := strings.Cut(rest, "@")
	if i := strings.LastIndexByte(holder, ':'); i >= 0 {
		holder = holder[:i]
	}
	info.LockedBy = holder
	if owner := str(2); owner != "" && strings.HasSuffix(value, ":"+owner) {
		info.GrantedAt = ms(num(3))
	} else if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
		info.GrantedAt = t
	}
	return info, nil
}

// List implements lockprovider.Inspector: every held ShedLock key of the
// configured prefix and environment. It SCANs every master (or shard) and
// reads each name, so it is meant for operators, not hot paths.
func (r *Redis) List(ctx context.Context) ([]batontype.LeaseInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	pattern := globEscape(r.base) + "*"
	var (
		mu    sync.Mutex
		names []string
		seen  = map[string]bool{}
	)
	scan := func(ctx context.Context, c scanner) error {
		mu.Lock() // go-redis runs the per-node callbacks concurrently
		defer mu.Unlock()
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return err
			}
			for _, k := range keys {
				name := strings.TrimPrefix(k, r.base)
				if !seen[name] && batontype.ValidateName(name) == nil {
					seen[name] = true
					names = append(names, name)
				}
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	each := func(ctx context.Context, c *goredis.Client) error { return scan(ctx, c) }
	var err error
	switch c := r.client.(type) {
	case interface {
		ForEachMaster(context.Context, func(context.Context, *goredis.Client) error) error
	}:
		err = c.ForEachMaster(ctx, each)
	case interface {
		ForEachShard(context.Context, func(context.Context, *goredis.Client) error) error
	}:
		err = c.ForEachShard(ctx, each)
	default:
		err = scan(ctx, r.client)
	}
	if err != nil {
		return nil, redisError("list", r.base+"*", err)
	}
	var infos []batontype.LeaseInfo
	for _, name := range names {
		info, err := r.read(ctx, name)
		if err != nil {
			return nil, redisError("list", name, err)
		}
		if info.Held { // baton's hashes, and keys expired since the scan, are not
			infos = append(infos, info)
		}
	}
	sortInfos(infos)
	return infos, nil
}

type scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *goredis.ScanCmd
}

func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// NotifyRelease implements lockprovider.ReleaseNotifier by polling (see
// RedisConfig.PollInterval): ShedLock publishes nothing, so only reading
// the keys sees a Java replica's release.
func (r *Redis) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	if stop, err := check.Watch(ctx, batontype.ValidateName(name)); err != nil {
		return stop, err
	}
	return r.poll.register(ctx, name, ch)
}

func (r *Redis) states(ctx context.Context, names []string) ([]batontype.LeaseInfo, error) {
	infos := make([]batontype.LeaseInfo, 0, len(names))
	for _, n := range names {
		info, err := r.read(ctx, n)
		if err != nil {
			return nil, redisError("poll", n, err)
		}
		info.Name = n
		infos = append(infos, info)
	}
	return infos, nil
}
