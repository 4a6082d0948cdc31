package redis_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

var _ lockprovider.RateLimiter = (*redisprovider.Provider)(nil)

// cmdLog records the commands a client sends.
type cmdLog struct {
	mu    sync.Mutex
	names []string
}

func (c *cmdLog) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *cmdLog) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		switch cmd.Name() {
		case "hello", "client", "auth", "select":
			// A (re)connection's handshake, not a decision's.
		default:
			c.mu.Lock()
			c.names = append(c.names, cmd.Name())
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}
func (c *cmdLog) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.mu.Lock()
		for _, cmd := range cmds {
			c.names = append(c.names, cmd.Name())
		}
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (c *cmdLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.names
	c.names = nil
	return out
}

func newRateProvider(t testing.TB, client redisprovider.Client) *redisprovider.Provider {
	t.Helper()
	p, err := redisprovider.New(client, &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var everyAlgorithm = []batontype.RateLimit{
	{Algorithm: batontype.FixedWindow, Rate: 3, Period: time.Minute},
	{Algorithm: batontype.SlidingLog, Rate: 3, Period: time.Minute},
	{Algorithm: batontype.SlidingWindow, Rate: 3, Period: time.Minute},
	{Algorithm: batontype.TokenBucket, Rate: 3, Period: time.Minute},
	{Algorithm: batontype.GCRA, Rate: 3, Period: time.Minute},
}

// Each decision is one EVALSHA, admitted or refused, one limit or five.
func TestRateOneRoundTrip(t *testing.T) {
	t.Parallel()
	client := redisenv.Client(t)
	log := &cmdLog{}
	client.AddHook(log)
	p := newRateProvider(t, client)
	ctx := context.Background()
	// Open the connection first: its handshake (HELLO, CLIENT SETINFO) is
	// not a decision's.
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	log.take()
	requests := []lockprovider.RateRequest{{Key: "all", N: 1, Limits: everyAlgorithm}}
	for _, l := range everyAlgorithm {
		requests = append(requests, lockprovider.RateRequest{Key: "one", N: 1, Limits: []batontype.RateLimit{l}})
	}
	for _, r := range requests {
		for i := range 5 { // admitted three times, then refused
			res, err := p.RateLimit(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			got := log.take()
			if i == 0 && len(got) == 2 && got[0] == "evalsha" && got[1] == "eval" {
				// Each request shape has its own script, which the server
				// may not have cached yet: loaded once by EVAL.
				got = got[:1]
			}
			if len(got) != 1 || got[0] != "evalsha" {
				t.Errorf("%s decision %d (allowed=%v) sent %v; want one evalsha", r.Key, i, res.Allowed, got)
			}
		}
	}
}

// Every key the limiter writes expires, at the latest when its limit is
// full again.
func TestRateKeysExpire(t *testing.T) {
	t.Parallel()
	client := redisenv.Client(t)
	prefix := testenv.Prefix(t)
	p, err := redisprovider.New(client, &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, key := range []string{"plain", "with}brace{and%"} {
		for range 2 {
			if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: key, N: 2, Limits: everyAlgorithm}); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2*len(everyAlgorithm) {
		t.Fatalf("keys %v; want one per limit and key", keys)
	}
	for _, k := range keys {
		ttl, err := client.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		// The sliding window counter lives longest: until its current
		// window has slid out, at most two periods.
		if ttl <= 0 || ttl > 2*time.Minute {
			t.Errorf("%s has PTTL %v; want an expiry within two periods", k, ttl)
		}
		if !strings.Contains(k, "rl:{") {
			t.Errorf("%s lacks the hash tag", k)
		}
	}
}

// Keys that differ only in characters the hash tag escapes keep separate
// budgets.
func TestRateKeyEscaping(t *testing.T) {
	t.Parallel()
	p := newRateProvider(t, redisenv.Client(t))
	limit := []batontype.RateLimit{{Algorithm: batontype.FixedWindow, Rate: 1, Period: time.Hour}}
	for _, key := range []string{"a}b", "a%7Db", "a%257Db", "{a}b"} {
		res, err := p.RateLimit(context.Background(), lockprovider.RateRequest{Key: key, N: 1, Limits: limit})
		if err != nil || !res.Allowed {
			t.Errorf("key %q: %+v %v; want its own fresh budget", key, res, err)
		}
	}
}

// After the server lost its script cache (restart, failover, SCRIPT FLUSH)
// the next decision reloads the script and succeeds.
func TestRateScriptFlush(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	client := redisenv.Server(t, srv)
	log := &cmdLog{}
	client.AddHook(log)
	p := newRateProvider(t, client)
	ctx := context.Background()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	req := lockprovider.RateRequest{Key: "k", N: 1, Limits: everyAlgorithm[4:]}
	for i := range 3 {
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		log.take()
		res, err := p.RateLimit(ctx, req)
		if err != nil || !res.Allowed {
			t.Fatalf("decision %d after SCRIPT FLUSH: %+v %v", i, res, err)
		}
		if got := log.take(); strings.Join(got, ",") != "evalsha,eval" {
			t.Errorf("sent %v; want evalsha then eval", got)
		}
	}
}

// On Redis Cluster every key of a request shares the hash slot of the key,
// so a multi-limit decision runs on one node.
func TestRateCluster(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t, 3)
	p := newRateProvider(t, redisenv.Cluster(t, cluster))
	ctx := context.Background()
	for _, key := range []string{"alpha", "beta", "gamma", "de}lta{", "x%y"} {
		for i := range 4 {
			res, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: key, N: 1, Limits: everyAlgorithm})
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if res.Allowed != (i < 3) {
				t.Errorf("%s request %d: allowed=%v", key, i, res.Allowed)
			}
		}
	}
}

// A dead server is an error (outcome unknown), not a decision.
func TestRateServerDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	client := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	defer client.Close()
	p := newRateProvider(t, client)
	_, err = p.RateLimit(context.Background(), lockprovider.RateRequest{Key: "k", N: 1, Limits: everyAlgorithm[:1]})
	if err == nil || strings.Contains(err.Error(), "invalid") {
		t.Fatalf("RateLimit on a closed port: %v; want a connection error", err)
	}
}
