package batontest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
)

// slowFirst delays its first Acquire: a cold start (connection set-up,
// script load) or one blip.
type slowFirst struct {
	lockprovider.Provider
	delay time.Duration
	calls atomic.Int64
}

func (s *slowFirst) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	if s.calls.Add(1) == 1 {
		time.Sleep(s.delay)
	}
	return s.Provider.Acquire(ctx, p)
}

// One slow round trip must not make every later short-deadline Acquire
// fail without asking the backend.
func TestAcquireRecoversFromSlowRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := &slowFirst{Provider: redisProvider(t, redisenv.Client(t)), delay: 1500 * time.Millisecond}
	l := newLocker(t, p, nil)
	first, err := l.TryAcquire(ctx, "cold", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = first.Release(ctx)
	for i := range 20 {
		actx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		k, err := l.Acquire(actx, "free-"+strconv.Itoa(i), nil)
		cancel()
		if err != nil {
			t.Fatalf("Acquire %d on a free name with 150ms after one 1.5s round trip: %v", i, err)
		}
		_ = k.Release(ctx)
	}
	if n := p.calls.Load(); n != 21 {
		t.Errorf("%d provider calls, want 21", n)
	}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	return "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
}

// With the backend unreachable, TryAcquire and Acquire report
// unavailability, never "held by another owner"; an Acquire that waited
// out its deadline also matches context.DeadlineExceeded.
func TestUnreachableBackendIsNotHeld(t *testing.T) {
	t.Parallel()
	providers := map[string]func(t *testing.T) lockprovider.Provider{
		"redis": func(t *testing.T) lockprovider.Provider {
			c := goredis.NewClient(&goredis.Options{Addr: closedPort(t), ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			p, err := redis.New(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		"postgres": func(t *testing.T) lockprovider.Provider {
			pool, err := pgxpool.New(context.Background(), "postgres://postgres@"+closedPort(t)+"/test?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			p, err := postgres.New(pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	}
	for name, newProvider := range providers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := &countingReleases{Provider: newProvider(t)}
			l := newLocker(t, p, &baton.Config{CallTimeout: 500 * time.Millisecond})
			_, err := l.TryAcquire(context.Background(), "x", nil)
			if !errors.Is(err, baton.ErrUnavailable) || errors.Is(err, baton.ErrNotAcquired) {
				t.Errorf("TryAcquire: %v; want ErrUnavailable, not ErrNotAcquired", err)
			}
			mustOnePrefix(t, err)
			// A request known not to have been sent changed nothing: no
			// release after it. Otherwise the outcome is unknown and the
			// Locker releases what it may have granted.
			want := int64(1)
			if batontype.NotSent(err) {
				want = 0
			} else if name == "postgres" {
				t.Errorf("TryAcquire on a refused PostgreSQL dial: %v; want NotSent", err)
			}
			if n := p.releases.Load(); n != want {
				t.Errorf("%d releases after %v; want %d", n, err, want)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = l.Acquire(ctx, "x", nil)
			if !errors.Is(err, baton.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, baton.ErrNotAcquired) {
				t.Errorf("Acquire: %v; want ErrUnavailable and DeadlineExceeded, not ErrNotAcquired", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Acquire with a 300ms deadline returned after %v", d)
			}
			mustOnePrefix(t, err)
			t.Log(err)
		})
	}
}

// countingReleases counts Release calls.
type countingReleases struct {
	lockprovider.Provider
	releases atomic.Int64
}

func (c *countingReleases) Release(ctx context.Context, p lockprovider.ReleaseParams) error {
	c.releases.Add(1)
	return c.Provider.Release(ctx, p)
}

// mustOnePrefix checks that err names its operation once.
func mustOnePrefix(t *testing.T, err error) {
	t.Helper()
	if s := err.Error(); strings.Count(s, "baton:") != 1 || !strings.HasPrefix(s, `baton: acquire "x": `) {
		t.Errorf("error %q: want one prefix `baton: acquire \"x\": `", s)
	}
}

// Config.CallTimeout bounds a call through a connection that stopped
// answering when the context has no deadline.
func TestCallTimeoutBoundsSilentBackend(t *testing.T) {
	t.Parallel()
	const callTimeout = 500 * time.Millisecond
	// One call, one brief best-effort release (four estimated round
	// trips, at least 100ms, at most CallTimeout: a cold connection under
	// load can make the estimate large), and scheduling slack.
	const bound = 2*callTimeout + 300*time.Millisecond
	backends := map[string]func(t *testing.T) (p lockprovider.Provider, pause, resume func()){
		"redis": func(t *testing.T) (lockprovider.Provider, func(), func()) {
			srv := testenv.StartRedis(t)
			// The client must honour context deadlines; without
			// ContextTimeoutEnabled go-redis waits for ReadTimeout.
			c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			return redisProvider(t, c), srv.Pause, srv.Resume
		},
		"postgres": func(t *testing.T) (lockprovider.Provider, func(), func()) {
			srv := testenv.StartPostgres(t)
			return postgresProvider(t, pgenv.Pool(t, srv.URL())), srv.Pause, srv.Resume
		},
	}
	for name, start := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, pause, resume := start(t)
			l := newLocker(t, p, &baton.Config{CallTimeout: callTimeout, DisableNotify: true})
			ctx := context.Background()
			k, err := l.TryAcquire(ctx, "warm", nil) // the connection is open
			if err != nil {
				t.Fatal(err)
			}
			_ = k.Release(ctx)

			pause()
			t.Cleanup(resume) // before the client's and the server's cleanups
			begin := time.Now()
			_, err = l.TryAcquire(ctx, "x", nil)
			took := time.Since(begin)
			if err == nil || errors.Is(err, baton.ErrNotAcquired) || !errors.Is(err, baton.ErrUnavailable) {
				t.Errorf("TryAcquire on a paused server: %v; want ErrUnavailable", err)
			}
			if took > bound {
				t.Errorf("TryAcquire on a paused server returned after %v; want at most %v", took, bound)
			}
			t.Logf("%v after %v", err, took)
		})
	}
}

// Typed nils, zero values and nil contexts are errors, not panics.
func TestNilsAndZeroValues(t *testing.T) {
	t.Parallel()
	if _, err := baton.NewLocker((*memory.Provider)(nil), nil); !errors.Is(err, baton.ErrNilProvider) || !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("NewLocker(typed nil): %v, want ErrNilProvider", err)
	}
	var zero baton.Locker
	if _, err := zero.TryAcquire(context.Background(), "x", nil); !errors.Is(err, baton.ErrNilProvider) {
		t.Errorf("zero Locker TryAcquire: %v", err)
	}
	if _, err := zero.Acquire(context.Background(), "x", nil); !errors.Is(err, baton.ErrNilProvider) {
		t.Errorf("zero Locker Acquire: %v", err)
	}
	l := newLocker(t, newMemory(t, nil), nil)
	var nilCtx context.Context
	for name, f := range map[string]func() error{
		"TryAcquire": func() error { _, err := l.TryAcquire(nilCtx, "x", nil); return err },
		"Acquire":    func() error { _, err := l.Acquire(nilCtx, "x", nil); return err },
	} {
		err := f()
		var ve *baton.ValidationError
		if !errors.Is(err, baton.ErrNilContext) || !errors.Is(err, baton.ErrInvalid) || !errors.As(err, &ve) {
			t.Errorf("%s(nil ctx): %v, want ErrNilContext", name, err)
		}
	}
}

// lateSecond delays its second Acquire until ctx is done, so that the real
// provider is asked with a spent context: the Acquire waiting past its
// deadline, as under load.
type lateSecond struct {
	lockprovider.Provider
	calls atomic.Int64
}

func (s *lateSecond) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	if s.calls.Add(1) == 2 {
		<-ctx.Done()
	}
	return s.Provider.Acquire(ctx, p)
}

// An attempt that ctx's deadline kept from being sent says nothing about the
// holder: Acquire still reports the backend's earlier "held by another owner".
func TestAcquireDeadlineKeepsNotAcquired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgenv.Schema(t).Pool
	holder, err := newLocker(t, postgresProvider(t, pool), nil).TryAcquire(ctx, "held", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Release(ctx) }()
	// On a single connection pgx refuses a spent context without sending
	// ("context already done"), which the provider reports as not sent; a
	// pool would fail earlier, waiting for a connection.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	waiter, err := postgres.New(conn.Conn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &lateSecond{Provider: waiter}
	actx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = newLocker(t, p, &baton.Config{DisableNotify: true}).Acquire(actx, "held", nil)
	if p.calls.Load() != 2 {
		t.Fatalf("%d provider calls, want 2 (err %v)", p.calls.Load(), err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, baton.ErrNotAcquired) {
		t.Errorf("Acquire of a held name past its deadline: %v, want DeadlineExceeded and ErrNotAcquired", err)
	}
}
