package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// Clients that would ignore context deadlines, and typed nils, are refused
// at construction with an error naming the setting.
func TestNewRefusesClients(t *testing.T) {
	t.Parallel()
	plain := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	cluster := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	failover := goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { _ = plain.Close(); _ = cluster.Close(); _ = ring.Close(); _ = failover.Close() })
	for _, c := range []struct {
		name   string
		client redisprovider.Client
		want   string
	}{
		{"Client without ContextTimeoutEnabled", plain, "ContextTimeoutEnabled"},
		{"ClusterClient without ContextTimeoutEnabled", cluster, "ContextTimeoutEnabled"},
		{"Ring without ContextTimeoutEnabled", ring, "ContextTimeoutEnabled"},
		{"failover Client without ContextTimeoutEnabled", failover, "ContextTimeoutEnabled"},
		{"(*Client)(nil)", (*goredis.Client)(nil), "nil"},
		{"(*ClusterClient)(nil)", (*goredis.ClusterClient)(nil), "nil"},
		{"(*Ring)(nil)", (*goredis.Ring)(nil), "nil"},
	} {
		_, err := redisprovider.New(c.client, nil)
		var ve *batontype.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, batontype.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%s): %v; want a ValidationError matching ErrInvalid that says %q", c.name, err, c.want)
		}
	}
}

// checkUnavailable asserts err is an *UnavailableError with the given
// NotSent, never a "held".
func checkUnavailable(t *testing.T, what string, err error, notSent bool) {
	t.Helper()
	var u *batontype.UnavailableError
	switch {
	case !errors.As(err, &u) || !errors.Is(err, batontype.ErrUnavailable):
		t.Errorf("%s: %v; want an *UnavailableError", what, err)
	case errors.Is(err, batontype.ErrNotAcquired):
		t.Errorf("%s: %v matches ErrNotAcquired", what, err)
	case u.NotSent != notSent:
		t.Errorf("%s: NotSent %v; want %v (%v)", what, u.NotSent, notSent, err)
	}
	t.Logf("%s: %v", what, err)
}

// A refused dial and a closed client are unavailability of requests never
// sent (definite); a server that stops answering is unavailability of
// unknown outcome, reported within the call's deadline.
func TestFaultRedisUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	refused := goredis.NewClient(&goredis.Options{Addr: fmt.Sprint("127.0.0.1:", testenv.FreePort(t)),
		MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = refused.Close() })
	p, _ := newProvider(t, refused)
	_, err := p.Acquire(ctx, acquireParams("refused"))
	checkUnavailable(t, "Acquire, dial refused", err, true)

	srv := testenv.StartRedis(t)
	closed := redisenv.Server(t, srv)
	pc, _ := newProvider(t, closed)
	_ = closed.Close()
	_, err = pc.Acquire(ctx, acquireParams("closed"))
	checkUnavailable(t, "Acquire, client closed", err, true)

	proxy := testenv.NewProxy(t, srv.Addr())
	c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	pb, _ := newProvider(t, c)
	a := acquireParams("held")
	if _, err := pb.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	proxy.SetMode(testenv.Blackhole)
	for _, op := range []struct {
		name     string
		deadline time.Duration
		call     func(context.Context) error
	}{
		{"Acquire", 2 * time.Second, func(ctx context.Context) error { _, err := pb.Acquire(ctx, acquireParams("other")); return err }},
		{"Extend", time.Second, func(ctx context.Context) error {
			_, err := pb.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: time.Minute})
			return err
		}},
		{"Release", time.Second, func(ctx context.Context) error {
			return pb.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner})
		}},
	} {
		cctx, cancel := context.WithTimeout(ctx, op.deadline)
		start := time.Now()
		err := op.call(cctx)
		took := time.Since(start)
		cancel()
		checkUnavailable(t, op.name+", blackholed", err, false)
		t.Logf("%s with a %v deadline through a blackhole returned after %v", op.name, op.deadline, took.Round(time.Millisecond))
		if took > op.deadline+300*time.Millisecond {
			t.Errorf("%s with a %v deadline through a blackhole returned after %v", op.name, op.deadline, took)
		}
	}
	proxy.SetMode(testenv.Pass)
}

// Canary for the refusal above: a go-redis client without
// ContextTimeoutEnabled ignores the context's deadline against a server
// that stopped answering and returns after its ReadTimeout (and again per
// retry). This is why New refuses such clients.
func TestFaultRedisIgnoredDeadlineCanary(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	proxy := testenv.NewProxy(t, srv.Addr())
	const readTimeout = 1500 * time.Millisecond
	c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ReadTimeout: readTimeout, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	proxy.SetMode(testenv.Blackhole)
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	err := c.Ping(ctx).Err()
	took := time.Since(start)
	t.Logf("without ContextTimeoutEnabled: a %v deadline returned after %v: %v", deadline, took.Round(time.Millisecond), err)
	if took < readTimeout-100*time.Millisecond {
		t.Errorf("go-redis honoured the deadline (%v) without ContextTimeoutEnabled; the refusal in New may no longer be needed", took)
	}
	proxy.SetMode(testenv.Pass)
}

// Registering for release notifications through a connection that stopped
// answering returns by the caller's deadline, for concurrent callers too.
func TestFaultRedisNotifyBlackholeDeadline(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	proxy := testenv.NewProxy(t, srv.Addr())
	c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	p, _ := newProvider(t, c)
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	proxy.SetMode(testenv.Blackhole)
	const deadline = time.Second
	const callers = 3
	took := make([]time.Duration, callers)
	errs := make([]error, callers)
	done := make(chan int, callers)
	for i := range callers {
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			start := time.Now()
			stop, err := p.NotifyRelease(ctx, fmt.Sprint("n-", i), make(chan struct{}, 1))
			took[i], errs[i] = time.Since(start), err
			if stop != nil {
				stop()
			}
			done <- i
		}()
	}
	for range callers {
		<-done
	}
	proxy.SetMode(testenv.Pass)
	for i := range callers {
		t.Logf("caller %d: %v after %v", i, errs[i], took[i].Round(time.Millisecond))
		if errs[i] == nil {
			t.Errorf("caller %d: registered through a blackhole", i)
		}
		if took[i] > deadline+300*time.Millisecond {
			t.Errorf("caller %d: NotifyRelease with a %v deadline returned after %v", i, deadline, took[i])
		}
	}
}
