package redis

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/backenderr"
	"github.com/baton-go/baton/internal/backenderr/rediserr"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/keyspace"
)

// Client is the part of go-redis the provider uses. *goredis.Client
// (including Sentinel failover clients), *goredis.ClusterClient and
// *goredis.Ring satisfy it.
type Client interface {
	goredis.Scripter
	// SSubscribe opens the sharded pub/sub connection that carries
	// release announcements (Redis 7.0 or newer).
	SSubscribe(ctx context.Context, channels ...string) *goredis.PubSub
	// Scan lists keys for Inspector.List.
	Scan(ctx context.Context, cursor uint64, match string, count int64) *goredis.ScanCmd
}

// Defaults of Config.
const (
	DefaultPrefix    = "baton:"
	DefaultRecordTTL = 30 * 24 * time.Hour
)

// MaxPrefixLen bounds Config.Prefix.
const MaxPrefixLen = keyspace.MaxPrefixLen

// Config configures a Provider. The zero value (or a nil *Config) means the
// defaults documented on each field.
type Config struct {
	// Prefix starts every key and channel the provider uses. Default
	// DefaultPrefix ("baton:"). It must be printable text without '{' or
	// '}', which are reserved for the hash tag.
	Prefix string

	// RecordTTL is the lifetime of the keys that outlive a lease. The
	// fencing counter expires RecordTTL after it was created: it is never
	// refreshed, so grants do not pay for it, and an expired counter
	// restarts from server time, above every earlier token. The newest-tick
	// key expires RecordTTL after the last tick grant; a tick more than
	// RecordTTL late could be granted again, and Inspect no longer reports
	// it. Default DefaultRecordTTL (30 days); at least one hour.
	RecordTTL time.Duration

	// Logger receives failures of the release subscription. Nil discards.
	Logger *slog.Logger
}

// Provider is a lockprovider.Provider on Redis. It also implements
// lockprovider.ReleaseNotifier and lockprovider.Inspector. It is safe for
// concurrent use. It does not own the client and never closes it.
type Provider struct {
	client       Client
	prefix       string
	recordTTLArg any // ms, boxed once
	log          *slog.Logger

	acquire     *goredis.Script
	acquireTick *goredis.Script
	extend      *goredis.Script
	release     *goredis.Script
	inspect     *goredis.Script

	notify notifier
	lists  listTTLs // run lists' expiries set lately, see AcquireRun
}

var (
	//go:embed lock_acquire.lua
	acquireSrc string
	//go:embed lock_acquire_tick.lua
	acquireTickSrc string
	//go:embed lock_extend.lua
	extendSrc string
	//go:embed lock_release.lua
	releaseSrc string
	//go:embed lock_inspect.lua
	inspectSrc string
)

// New returns a provider that keeps its leases in the Redis behind client.
// A nil cfg means the defaults. It makes no network call.
func New(client Client, cfg *Config) (*Provider, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	c := defaults.Of(cfg)
	var err error
	if c.Prefix, err = keyspace.Prefix(c.Prefix, DefaultPrefix, true); err != nil {
		return nil, err
	}
	if c.RecordTTL, err = defaults.RecordTTL(c.RecordTTL, DefaultRecordTTL); err != nil {
		return nil, err
	}
	c.Logger = defaults.Logger(c.Logger)
	p := &Provider{
		client:       client,
		prefix:       c.Prefix,
		recordTTLArg: c.RecordTTL.Milliseconds(),
		log:          c.Logger,
		acquire:      goredis.NewScript(acquireSrc),
		acquireTick:  goredis.NewScript(acquireTickSrc),
		extend:       goredis.NewScript(extendSrc),
		release:      goredis.NewScript(releaseSrc),
		inspect:      goredis.NewScript(inspectSrc),
	}
	p.notify.init(client, c.Logger)
	return p, nil
}

// checkClient refuses nil clients, typed nils included, and go-redis
// clients that would ignore context deadlines: without
// ContextTimeoutEnabled, go-redis bounds each socket read and write by its
// ReadTimeout and WriteTimeout only, and retries, so a call against a
// server that stopped answering outlives its context by seconds (measured:
// 10 s for a 2 s deadline with the defaults). Other Client implementations
// cannot be inspected and are taken as they are.
func checkClient(client Client) error {
	invalid := func(value, reason string) error {
		return &batontype.ValidationError{Pkg: "redis", Field: "client", Value: value, Reason: reason, Err: batontype.ErrInvalid}
	}
	if client == nil {
		return invalid("nil", "must not be nil")
	}
	var ctxTimeout bool
	switch c := client.(type) {
	case *goredis.Client: // standalone and Sentinel failover clients
		if c == nil {
			return invalid("(*redis.Client)(nil)", "must not be nil")
		}
		ctxTimeout = c.Options().ContextTimeoutEnabled
	case *goredis.ClusterClient:
		if c == nil {
			return invalid("(*redis.ClusterClient)(nil)", "must not be nil")
		}
		ctxTimeout = c.Options().ContextTimeoutEnabled
	case *goredis.Ring:
		if c == nil {
			return invalid("(*redis.Ring)(nil)", "must not be nil")
		}
		ctxTimeout = c.Options().ContextTimeoutEnabled
	default:
		return nil
	}
	if !ctxTimeout {
		return invalid(fmt.Sprintf("%T", client), "has ContextTimeoutEnabled false, so go-redis would ignore context deadlines "+
			"and calls could outlive them by ReadTimeout times MaxRetries; set ContextTimeoutEnabled: true in its options")
	}
	return nil
}

// opError wraps a failed call once (see backenderr.Wrap), classified by
// rediserr.Classify.
func opError(op, name string, err error) error {
	return backenderr.Wrap("redis", op, name, err, rediserr.Classify)
}

// Prefix returns the key prefix in use.
func (p *Provider) Prefix() string { return p.prefix }

// Key layout, for a name N with its hash tag {N}: prefix{N} holds the lease
// and is also N's release channel, prefix{N}:f the fencing counter,
// prefix{N}:t the newest tick. '}' would end the tag early and '%' is the
// escape, so both are escaped in N.
const (
	fenceSuffix = ":f"
	tickSuffix  = ":t"
)

// key is the lease key of name.
func (p *Provider) key(name string) string {
	l, _ := p.keys(name)
	return l
}

// keys returns the lease and fencing counter keys of name, built in one
// allocation.
func (p *Provider) keys(name string) (lease, fence string) {
	fence = keyspace.Tagged(p.prefix, name, fenceSuffix)
	return fence[:len(fence)-len(fenceSuffix)], fence
}

func (p *Provider) tickKey(lease string) string { return lease + tickSuffix }

// nameOf inverts the key functions; ok is false for other keys.
func (p *Provider) nameOf(key string) (string, bool) {
	name, suffix, ok := keyspace.Untag(p.prefix, key)
	if !ok || (suffix != "" && suffix != fenceSuffix && suffix != tickSuffix) {
		return "", false
	}
	return name, true
}
