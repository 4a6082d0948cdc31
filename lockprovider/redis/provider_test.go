package redis_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// Every go-redis client kind the provider promises to accept.
var (
	_ redisprovider.Client = (*goredis.Client)(nil)
	_ redisprovider.Client = (*goredis.ClusterClient)(nil)
	_ redisprovider.Client = (*goredis.Ring)(nil)
	_ redisprovider.Client = goredis.UniversalClient(nil)
)

func newProvider(t testing.TB, c redisprovider.Client) (*redisprovider.Provider, string) {
	t.Helper()
	prefix := testenv.Prefix(t)
	p, err := redisprovider.New(c, &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, prefix
}

func acquireParams(name string) lockprovider.AcquireParams {
	return lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), LockedBy: "test", AtMostFor: time.Minute}
}

func TestNewRejectsBadInput(t *testing.T) {
	t.Parallel()
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}) // never dialled
	t.Cleanup(func() { _ = c.Close() })
	if _, err := redisprovider.New(nil, nil); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("New(nil client): %v, want ErrInvalid", err)
	}
	for _, prefix := range []string{"a{b", "a}b", "tab\there", "nl\n", "\xff", strings.Repeat("p", 101)} {
		_, err := redisprovider.New(c, &redisprovider.Config{Prefix: prefix})
		var ve *batontype.ValidationError
		if !errors.As(err, &ve) || ve.Field != "Prefix" || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("New(Prefix %q): %v, want a *ValidationError for Prefix", prefix, err)
		}
	}
	for _, ttl := range []time.Duration{-time.Hour, time.Minute} {
		_, err := redisprovider.New(c, &redisprovider.Config{RecordTTL: ttl})
		if !errors.Is(err, batontype.ErrInvalidDuration) {
			t.Errorf("New(RecordTTL %v): %v, want ErrInvalidDuration", ttl, err)
		}
	}
	p, err := redisprovider.New(c, nil)
	if err != nil || p.Prefix() != redisprovider.DefaultPrefix {
		t.Errorf("New(nil config) = %v, %v; want the default prefix", p, err)
	}
}

// Bad input is refused before any network call: the client points at a
// closed port, so a network call would fail differently.
func TestValidationBeforeNetwork(t *testing.T) {
	t.Parallel()
	hook := &countHook{}
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, ContextTimeoutEnabled: true})
	c.AddHook(hook)
	t.Cleanup(func() { _ = c.Close() })
	p, _ := newProvider(t, c)
	ctx := t.Context()
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "", Owner: "o", AtMostFor: time.Second}); !errors.Is(err, batontype.ErrInvalidName) {
		t.Errorf("Acquire empty name: %v", err)
	}
	if _, err := p.Extend(ctx, lockprovider.ExtendParams{Name: "n", Owner: "o", AtMostFor: time.Second, AtLeastFor: 2 * time.Second}); !errors.Is(err, batontype.ErrInvalidDuration) {
		t.Errorf("Extend AtLeastFor > AtMostFor: %v", err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "n"}); !errors.Is(err, batontype.ErrInvalidOwner) {
		t.Errorf("Release without owner: %v", err)
	}
	if _, err := p.Inspect(ctx, "bad\x00name"); !errors.Is(err, batontype.ErrInvalidName) {
		t.Errorf("Inspect control char: %v", err)
	}
	if _, err := p.NotifyRelease(ctx, "", make(chan struct{})); !errors.Is(err, batontype.ErrInvalidName) {
		t.Errorf("NotifyRelease empty name: %v", err)
	}
	if n := hook.n.Load(); n != 0 {
		t.Errorf("%d commands sent for invalid input, want 0", n)
	}
	// A backend failure is unavailability, not a refusal; a refused dial
	// sent nothing.
	_, err := p.Acquire(ctx, acquireParams("n"))
	if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) || !batontype.Definite(err) {
		t.Errorf("Acquire on a dead server: %v, want a definite ErrUnavailable", err)
	}
}

type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *countHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// Each operation is one command (one EVALSHA) once the scripts are cached
// on the server. Right after the cache was lost, the first call of each
// script costs two: EVALSHA answered NOSCRIPT, then EVAL.
func TestOneRoundTripPerOperation(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	c := redisenv.Server(t, srv)
	hook := &countHook{}
	c.AddHook(hook)
	p, _ := newProvider(t, c)
	ctx := t.Context()
	// Open the connection first: its handshake (HELLO, CLIENT SETINFO)
	// is not part of any operation.
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	count := func(what string, want int64, f func() error) {
		t.Helper()
		before := hook.n.Load()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := hook.n.Load() - before; got != want {
			t.Errorf("%s: %d commands, want %d", what, got, want)
		}
	}
	run := func(round string, want int64) {
		ap := acquireParams("rt-" + round)
		count(round+" acquire", want, func() error { _, err := p.Acquire(ctx, ap); return err })
		count(round+" idempotent acquire", 1, func() error { _, err := p.Acquire(ctx, ap); return err })
		count(round+" extend", want, func() error {
			_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: ap.Name, Owner: ap.Owner, AtMostFor: time.Minute})
			return err
		})
		count(round+" release", want, func() error {
			return p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner})
		})
		tp := acquireParams("rt-tick-" + round)
		tp.Tick = time.Now()
		count(round+" acquire with tick", want, func() error { _, err := p.Acquire(ctx, tp); return err })
		count(round+" inspect", want, func() error { _, err := p.Inspect(ctx, tp.Name); return err })
	}
	// Fresh server: no script cached yet.
	run("cold", 2)
	run("warm", 1)
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	run("flushed", 2)
}

// SCRIPT FLUSH in the middle of a run does not surface as an error.
func TestScriptFlush(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	c := redisenv.Server(t, srv)
	p, _ := newProvider(t, c)
	ctx := t.Context()
	for i := range 20 {
		if i%5 == 2 {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		ap := acquireParams("flush")
		if i%2 == 0 {
			ap.Tick = time.UnixMilli(int64(1_700_000_000_000 + i))
		}
		l, err := p.Acquire(ctx, ap)
		if err != nil {
			t.Fatalf("round %d: Acquire: %v", i, err)
		}
		if _, err := p.Extend(ctx, lockprovider.ExtendParams{Name: ap.Name, Owner: ap.Owner, AtMostFor: time.Minute}); err != nil {
			t.Fatalf("round %d: Extend: %v", i, err)
		}
		if _, err := p.Inspect(ctx, ap.Name); err != nil {
			t.Fatalf("round %d: Inspect: %v", i, err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}); err != nil {
			t.Fatalf("round %d: Release: %v", i, err)
		}
		if l.Token <= 0 {
			t.Fatalf("round %d: fence %d", i, l.Token)
		}
	}
}

// Fencing tokens keep increasing when Redis loses its data, by FLUSHALL or
// by a restart without persistence.
func TestFenceSurvivesDataLoss(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	ctx := t.Context()
	var last int64
	grant := func(c redisprovider.Client, prefix, what string) {
		t.Helper()
		p, err := redisprovider.New(c, &redisprovider.Config{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			ap := acquireParams("fenced")
			l, err := p.Acquire(ctx, ap)
			if err != nil {
				t.Fatalf("%s: Acquire: %v", what, err)
			}
			if l.Token <= last {
				t.Fatalf("%s: fence %d, want > %d", what, l.Token, last)
			}
			last = l.Token
			if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}); err != nil {
				t.Fatalf("%s: Release: %v", what, err)
			}
		}
	}
	prefix := testenv.Prefix(t)
	c := redisenv.Server(t, srv)
	grant(c, prefix, "first use")
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	grant(c, prefix, "after FLUSHALL")
	if err := srv.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	grant(redisenv.Server(t, srv), prefix, "after restart")
}

// Names with the characters that matter for hash tags and globs keep their
// keys in one slot and come back from List unchanged.
func TestAwkwardNames(t *testing.T) {
	t.Parallel()
	p, prefix := newProvider(t, redisenv.Client(t))
	ctx := t.Context()
	names := []string{"}", "}x", "a}b{c", "%7D", "100%", "{x}", "*?[a]\\", "ünï cödé", strings.Repeat("n", batontype.MaxNameLen)}
	for _, n := range names {
		if _, err := p.Acquire(ctx, acquireParams(n)); err != nil {
			t.Fatalf("Acquire(%q): %v", n, err)
		}
	}
	infos, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, in := range infos {
		got[in.Name] = in.Held
	}
	for _, n := range names {
		if !got[n] {
			t.Errorf("List lacks held name %q (got %v)", n, got)
		}
	}
	if len(infos) != len(names) {
		t.Errorf("List returned %d names, want %d", len(infos), len(names))
	}
	checkTTLs(t, redisenv.Client(t), prefix)
}

// checkTTLs asserts that every key under the prefixes expires, and that
// there are keys to check.
func checkTTLs(t *testing.T, c redisprovider.Client, prefixes ...string) {
	t.Helper()
	ctx := context.Background()
	var n atomic.Int64 // ForEachMaster runs check concurrently
	want := map[string]bool{}
	for _, p := range prefixes {
		want[p] = true
	}
	check := func(ctx context.Context, c *goredis.Client) error {
		// Test prefixes are "t" + 12 hex digits + ":"; "" means every key
		// (a private server).
		match := "t*"
		if want[""] {
			match = "*"
		}
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			if k := iter.Val(); !want[""] && (len(k) < 14 || !want[k[:14]]) {
				continue
			}
			n.Add(1)
			ttl, err := c.PTTL(ctx, iter.Val()).Result()
			if err != nil {
				return err
			}
			// -2 (PTTL's "no such key", go-redis's -2ns): the key expired
			// between SCAN and PTTL, which is what a TTL is for. -1 means
			// the key has none.
			if ttl <= 0 && ttl != -2 {
				t.Errorf("key %q has PTTL %v, want a TTL", iter.Val(), ttl)
			}
		}
		return iter.Err()
	}
	var err error
	switch c := c.(type) {
	case *goredis.ClusterClient:
		err = c.ForEachMaster(ctx, check)
	case *goredis.Client:
		err = check(ctx, c)
	default:
		t.Fatalf("checkTTLs: unsupported client %T", c)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() == 0 {
		t.Errorf("no keys under %q: nothing checked", prefixes)
	}
}

// A waiter is signalled after a release, on a client that sees it.
func TestNotifyRelease(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t, redisenv.Client(t))
	testNotify(t, p)
}

func testNotify(t *testing.T, p *redisprovider.Provider) {
	t.Helper()
	ctx := t.Context()
	const names = 5
	chans := make([]chan struct{}, names)
	for i := range names {
		chans[i] = make(chan struct{}, 1)
		stop, err := p.NotifyRelease(ctx, "n"+string(rune('a'+i)), chans[i])
		if err != nil {
			t.Fatalf("NotifyRelease: %v", err)
		}
		defer stop()
	}
	for i := range names {
		ap := acquireParams("n" + string(rune('a'+i)))
		if _, err := p.Acquire(ctx, ap); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-chans[i]:
			t.Logf("%s: signalled %v after release", ap.Name, time.Since(start))
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no signal within 5s of release", ap.Name)
		}
	}
	// Releases leaving the lease in force until AtLeastFor are not announced.
	ap := acquireParams("na")
	ap.AtLeastFor = time.Minute
	if _, err := p.Acquire(ctx, ap); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-chans[0]:
		t.Errorf("signalled although the lease stays in force for AtLeastFor")
	case <-time.After(100 * time.Millisecond):
	}
}

// Owners and LockedBy with spaces and non-ASCII text survive the lease
// encoding through grant, repeat, extend, inspect and release with
// AtLeastFor.
func TestLeaseEncoding(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t, redisenv.Client(t))
	ctx := t.Context()
	tick := time.UnixMilli(1_800_000_000_123)
	ap := lockprovider.AcquireParams{
		Name: "enc", Owner: "owner with spaces ✓", LockedBy: "host 1 / pid 42 — ünï",
		AtMostFor: time.Minute, AtLeastFor: 2 * time.Second, Tick: tick,
	}
	l, err := p.Acquire(ctx, ap)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.AtLeastUntil.Sub(l.GrantedAt); got != 2*time.Second {
		t.Errorf("AtLeastUntil - GrantedAt = %v, want 2s", got)
	}
	if !l.Tick.Equal(tick) {
		t.Errorf("Tick %v, want %v", l.Tick, tick)
	}
	again, err := p.Acquire(ctx, ap)
	if err != nil || again != l {
		t.Errorf("repeated Acquire = %+v, %v; want %+v", again, err, l)
	}
	x, err := p.Extend(ctx, lockprovider.ExtendParams{Name: ap.Name, Owner: ap.Owner, AtMostFor: 2 * time.Minute, AtLeastFor: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if x.Token != l.Token || !x.GrantedAt.Equal(l.GrantedAt) || !x.Tick.Equal(tick) || x.Until.Sub(x.AtLeastUntil) != time.Minute+59*time.Second {
		t.Errorf("Extend = %+v after grant %+v", x, l)
	}
	if again, err := p.Acquire(ctx, ap); err != nil || again != x {
		t.Errorf("Acquire after Extend = %+v, %v; want %+v", again, err, x)
	}
	info, err := p.Inspect(ctx, ap.Name)
	if err != nil || info.LockedBy != ap.LockedBy || !info.Held || info.Token != l.Token || !info.LastTick.Equal(tick) || !info.Until.Equal(x.Until) {
		t.Errorf("Inspect = %+v, %v", info, err)
	}
	// Released inside its at-least bound: still held until that bound.
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner}); err != nil {
		t.Fatal(err)
	}
	if info, err := p.Inspect(ctx, ap.Name); err != nil || !info.Held || !info.Until.Equal(x.AtLeastUntil) {
		t.Errorf("after Release inside AtLeastFor: %+v, %v; want held until %v", info, err, x.AtLeastUntil)
	}
	if _, err := p.Acquire(ctx, acquireParams(ap.Name)); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("Acquire by another owner inside AtLeastFor: %v", err)
	}
}
