package batontest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/redis"
)

// A Redis restart without persistence while a lock is held: the lease is
// gone from the server, so a second holder gets the lock at once. The
// first holder's Context must end with ErrLockLost within about its trust
// window, the second holder's token must be larger (the counter restarts
// from server time), and the first holder's late write through a fence
// guard must be rejected.
func TestFaultRedisRestartMidHold(t *testing.T) {
	t.Parallel()
	const ttl = 600 * time.Millisecond
	ctx := context.Background()

	pg := pgenv.Schema(t)
	if _, err := pg.Pool.Exec(ctx, `CREATE TABLE account (id text PRIMARY KEY, balance int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	guard, err := pgfence.NewGuard(pg.Schema+".account", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := guard.AddColumn(ctx, pg.Pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Pool.Exec(ctx, `INSERT INTO account (id, balance) VALUES ('a', 0)`); err != nil {
		t.Fatal(err)
	}

	srv := testenv.StartRedis(t)
	// Short timeouts so that calls against the restarting server fail
	// fast instead of retrying past the test's bounds.
	newClient := func() *goredis.Client {
		c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), DialTimeout: 200 * time.Millisecond,
			ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	old := newLocker(t, redisProvider(t, newClient()), &baton.Config{ReleaseTimeout: time.Second})
	next := newLocker(t, redisProvider(t, newClient()), &baton.Config{ReleaseTimeout: time.Second})

	a, err := old.TryAcquire(ctx, "account:a", &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	if err := guard.Update(ctx, pg.Pool, a.Token(), "a", map[string]any{"balance": 1}); err != nil {
		t.Fatalf("first holder's write: %v", err)
	}
	// Let a renewal or two go through, to show the lock was alive.
	time.Sleep(ttl)
	if err := a.Context().Err(); err != nil {
		t.Fatalf("lost before the restart: %v", context.Cause(a.Context()))
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()

	// The server forgot the lease: the second holder gets it (its first
	// calls may meet connections the restart closed).
	var b *baton.Lock
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err = next.TryAcquire(ctx, "account:a", &baton.AcquireOptions{AtMostFor: 10 * time.Second})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no grant after the restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer b.Release(ctx)
	t.Logf("tokens: before the restart %d, after %d", a.Token(), b.Token())
	if b.Token() <= a.Token() {
		t.Errorf("token after the restart %d is not larger than before %d", b.Token(), a.Token())
	}

	select {
	case <-a.Context().Done():
	case <-time.After(10 * ttl):
		t.Fatalf("first holder's Context not done %v after the restart", 10*ttl)
	}
	lostAfter := time.Since(restarted)
	t.Logf("first holder saw the loss %v after the restart (TTL %v), cause: %v",
		lostAfter.Round(time.Millisecond), ttl, context.Cause(a.Context()))
	if cause := context.Cause(a.Context()); !errors.Is(cause, baton.ErrLockLost) {
		t.Errorf("cause %v; want ErrLockLost", cause)
	}
	// The window ends one TTL after the last renewal was sent, which
	// was before the restart; allow scheduling slack on a busy machine.
	if lostAfter > 2*ttl {
		t.Errorf("loss reported %v after the restart; the trust window is %v", lostAfter, ttl)
	}
	if err := a.Extend(ctx, ttl); !errors.Is(err, baton.ErrLockLost) {
		t.Errorf("Extend on the lost lock: %v; want ErrLockLost", err)
	}

	if err := guard.Update(ctx, pg.Pool, b.Token(), "a", map[string]any{"balance": 2}); err != nil {
		t.Fatalf("second holder's write: %v", err)
	}
	// The first holder acting late (as if it missed its Context).
	if err := guard.Update(ctx, pg.Pool, a.Token(), "a", map[string]any{"balance": 3}); !errors.Is(err, fence.ErrStaleToken) {
		t.Errorf("stale holder's write: %v; want ErrStaleToken", err)
	}
	var balance int
	if err := pg.Pool.QueryRow(ctx, `SELECT balance FROM account WHERE id = 'a'`).Scan(&balance); err != nil {
		t.Fatal(err)
	}
	if balance != 2 {
		t.Errorf("balance %d; want the second holder's 2", balance)
	}

	// Canary, enforcement off: the same late write without the guard
	// lands over the second holder's, which is the lost update the guard
	// prevented above. If it did not land, the scenario would not have
	// produced a stale holder and the check above would prove nothing.
	tag, err := pg.Pool.Exec(ctx, `UPDATE account SET balance = 3 WHERE id = 'a'`)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Pool.QueryRow(ctx, `SELECT balance FROM account WHERE id = 'a'`).Scan(&balance); err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() != 1 || balance != 3 {
		t.Errorf("canary: the unguarded late write did not land (balance %d)", balance)
	}
}

// A PostgreSQL lock server paused (SIGSTOP) for three TTLs while a lock
// with auto-renew is held: renewals cannot get through, so the holder's
// Context must end with ErrLockLost within about the trust window, stay
// ended after the server resumes, and Release must return within
// ReleaseTimeout, during the pause and after it.
func TestFaultPostgresPauseMidHold(t *testing.T) {
	t.Parallel()
	const ttl = 600 * time.Millisecond
	const releaseTimeout = time.Second
	ctx := context.Background()

	srv := testenv.StartPostgres(t)
	p := postgresProvider(t, pgenv.Pool(t, srv.URL()))
	l := newLocker(t, p, &baton.Config{ReleaseTimeout: releaseTimeout})

	a, err := l.TryAcquire(ctx, "paused", &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.TryAcquire(ctx, "paused-other", &baton.AcquireOptions{AtMostFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl)
	if err := a.Context().Err(); err != nil {
		t.Fatalf("lost before the pause: %v", context.Cause(a.Context()))
	}

	srv.Pause()
	paused := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			srv.Resume()
		}
	}
	defer resume()

	select {
	case <-a.Context().Done():
	case <-time.After(10 * ttl):
		t.Fatalf("Context not done %v into the pause", 10*ttl)
	}
	lostAfter := time.Since(paused)
	t.Logf("loss reported %v into the pause (TTL %v), cause: %v", lostAfter.Round(time.Millisecond), ttl, context.Cause(a.Context()))
	if cause := context.Cause(a.Context()); !errors.Is(cause, baton.ErrLockLost) {
		t.Errorf("cause %v; want ErrLockLost", cause)
	}
	if lostAfter > 2*ttl {
		t.Errorf("loss reported %v into the pause; the trust window is %v", lostAfter, ttl)
	}

	// Release while the server is still stopped: bounded by ReleaseTimeout.
	start := time.Now()
	err = other.Release(ctx)
	took := time.Since(start)
	t.Logf("Release during the pause: %v after %v", err, took.Round(time.Millisecond))
	if took > releaseTimeout+time.Second {
		t.Errorf("Release during the pause took %v; ReleaseTimeout is %v", took, releaseTimeout)
	}

	// Keep the pause at three TTLs in all, so the lease has expired on
	// the server's clock when it resumes.
	time.Sleep(time.Until(paused.Add(3 * ttl)))
	resume()

	// Renewals sent during the pause now reach the server: none may
	// revive the holder's belief.
	time.Sleep(ttl)
	if a.Context().Err() == nil {
		t.Fatal("Context revived after the resume")
	}
	if err := a.Extend(ctx, ttl); !errors.Is(err, baton.ErrLockLost) {
		t.Errorf("Extend after the resume: %v; want ErrLockLost", err)
	}
	start = time.Now()
	err = a.Release(ctx)
	took = time.Since(start)
	t.Logf("Release after the resume: %v after %v", err, took.Round(time.Millisecond))
	if took > releaseTimeout+time.Second {
		t.Errorf("Release after the resume took %v; ReleaseTimeout is %v", took, releaseTimeout)
	}

	// The lease expired on the server during the pause: someone else
	// gets it now, with a larger token.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := l.TryAcquire(ctx, "paused", &baton.AcquireOptions{AtMostFor: ttl})
		if err == nil {
			if b.Token() <= a.Token() {
				t.Errorf("token after the pause %d; before %d", b.Token(), a.Token())
			}
			_ = b.Release(ctx)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no grant after the resume: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// faultBound is what the fault tests allow a call beyond its deadline and
// its documented per-call bounds: scheduling on a loaded machine.
const faultBound = 500 * time.Millisecond

// Acquire with a deadline on PostgreSQL whose connections stop answering
// (a blackholed proxy): every caller returns within its deadline plus
// ReleaseTimeout (the release of an attempt of unknown outcome), though registering for release notifications opens a
// connection that hangs, and pgx's clean-up of such a connection (a cancel
// request down the dead path) can take 15 s. Several waiters at once must
// not queue behind each other.
func TestFaultPostgresBlackholeAcquireDeadline(t *testing.T) {
	t.Parallel()
	const deadline = 3 * time.Second
	const releaseTimeout = 500 * time.Millisecond
	ctx := context.Background()
	pg := pgenv.Schema(t)
	proxy, u := testenv.ProxyURL(t, pg.URL)
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p := postgresProvider(t, pool)
	l := newLocker(t, p, &baton.Config{ReleaseTimeout: releaseTimeout})
	// Warm the pool (its connections are fresh, so pgxpool does not ping
	// them), then cut the path.
	for i := range 3 {
		lk, err := l.TryAcquire(ctx, fmt.Sprint("warm-", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = lk.Release(ctx)
	}
	proxy.SetMode(testenv.Blackhole)

	const waiters = 3
	var wg sync.WaitGroup
	took := make([]time.Duration, waiters)
	errs := make([]error, waiters)
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			lk, err := l.Acquire(cctx, fmt.Sprint("blackholed-", i), nil)
			took[i], errs[i] = time.Since(start), err
			if lk != nil {
				_ = lk.Release(ctx)
			}
		}()
	}
	wg.Wait()
	for i := range waiters {
		t.Logf("waiter %d: returned after %v: %v", i, took[i].Round(time.Millisecond), errs[i])
		if errs[i] == nil {
			t.Errorf("waiter %d: acquired through a blackhole", i)
		}
		if took[i] > deadline+releaseTimeout+faultBound {
			t.Errorf("waiter %d: Acquire with a %v deadline returned after %v", i, deadline, took[i])
		}
	}
	proxy.SetMode(testenv.Pass)
}

// TryAcquire, Acquire and Release on Redis whose connection stops answering
// (a blackholed proxy): TryAcquire and Acquire return within their deadline
// plus the bounded release of an attempt of unknown outcome, Release within
// ReleaseTimeout, and none reports the outage as "held".
func TestFaultRedisBlackholeDeadlines(t *testing.T) {
	t.Parallel()
	const (
		deadline       = 2 * time.Second
		releaseTimeout = time.Second
	)
	ctx := context.Background()
	srv := testenv.StartRedis(t)
	proxy := testenv.NewProxy(t, srv.Addr())
	c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	l := newLocker(t, redisProvider(t, c), &baton.Config{ReleaseTimeout: releaseTimeout})
	held, err := l.TryAcquire(ctx, "held", nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy.SetMode(testenv.Blackhole)

	cctx, cancel := context.WithTimeout(ctx, deadline)
	start := time.Now()
	_, err = l.TryAcquire(cctx, "other", nil)
	took := time.Since(start)
	cancel()
	t.Logf("TryAcquire with a %v deadline: %v after %v", deadline, err, took.Round(time.Millisecond))
	if err == nil || errors.Is(err, baton.ErrNotAcquired) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("TryAcquire through a blackhole: %v; want an unavailability or deadline error", err)
	}
	if took > deadline+releaseTimeout+faultBound {
		t.Errorf("TryAcquire with a %v deadline returned after %v", deadline, took)
	}
	// Acquire also registers for release notifications, which opens a
	// subscription connection through the blackhole: concurrent waiters
	// each return by their own deadline.
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			_, err := l.Acquire(cctx, fmt.Sprint("waiter-", i), nil)
			took := time.Since(start)
			t.Logf("Acquire %d with a %v deadline: %v after %v", i, deadline, err, took.Round(time.Millisecond))
			if err == nil {
				t.Errorf("Acquire %d through a blackhole succeeded", i)
			}
			if took > deadline+releaseTimeout+faultBound {
				t.Errorf("Acquire %d with a %v deadline returned after %v", i, deadline, took)
			}
		}()
	}
	wg.Wait()

	start = time.Now()
	err = held.Release(ctx)
	took = time.Since(start)
	t.Logf("Release: %v after %v", err, took.Round(time.Millisecond))
	if err == nil {
		t.Error("Release through a blackhole succeeded")
	}
	if took > releaseTimeout+faultBound {
		t.Errorf("Release with ReleaseTimeout %v returned after %v", releaseTimeout, took)
	}
	proxy.SetMode(testenv.Pass)
}

// How long two holders coexist after a Redis restart without persistence:
// the restart forgets the lease, a second client is granted the name at
// once, and the first keeps believing it holds the lock until a renewal is
// refused (auto-renew, every third of the lease) or its trust window ends
// (no auto-renew, up to the lease length). Each trial restarts the server
// at a different phase of the renewal cycle and measures, on this
// machine's monotonic clock, from the second grant to the end of the first
// holder's Context. Fencing is what protects the data meanwhile
// (TestFaultRedisRestartMidHold).
func TestFaultRedisRestartCoexistence(t *testing.T) {
	t.Parallel()
	const (
		ttl    = 900 * time.Millisecond
		trials = 5
		slack  = 300 * time.Millisecond
	)
	ctx := context.Background()
	srv := testenv.StartRedis(t)
	newClient := func() *goredis.Client {
		c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), DialTimeout: 200 * time.Millisecond,
			ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	first := newLocker(t, redisProvider(t, newClient()), &baton.Config{ReleaseTimeout: 300 * time.Millisecond})
	second := newLocker(t, redisProvider(t, newClient()), &baton.Config{ReleaseTimeout: 300 * time.Millisecond})
	for _, autoRenew := range []bool{true, false} {
		var worst time.Duration
		for i := range trials {
			name := fmt.Sprintf("coexist-%v-%d", autoRenew, i)
			a, err := first.TryAcquire(ctx, name, &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: autoRenew})
			if err != nil {
				t.Fatal(err)
			}
			// Restart at a different phase of the renewal cycle each time.
			time.Sleep(time.Duration(i) * ttl / (3 * trials))
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			var b *baton.Lock
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
				if b, err = second.TryAcquire(ctx, name, &baton.AcquireOptions{AtMostFor: 10 * time.Second}); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no grant after the restart: %v", err)
				}
			}
			granted := time.Now()
			select {
			case <-a.Context().Done():
			case <-time.After(3 * ttl):
				t.Fatalf("auto-renew %v: first holder's Context not done %v after the second grant", autoRenew, 3*ttl)
			}
			overlap := max(0, time.Since(granted))
			worst = max(worst, overlap)
			t.Logf("auto-renew %v, trial %d: two holders for %v (cause: %v)", autoRenew, i, overlap.Round(time.Millisecond), context.Cause(a.Context()))
			_ = a.Release(ctx)
			_ = b.Release(ctx)
		}
		limit := ttl + slack
		if autoRenew {
			limit = ttl/3 + slack
		}
		t.Logf("auto-renew %v: two holders coexisted for at most %v (lease %v)", autoRenew, worst.Round(time.Millisecond), ttl)
		if worst > limit {
			t.Errorf("auto-renew %v: two holders coexisted for %v; want at most %v", autoRenew, worst, limit)
		}
	}
}

// An auto-renewed lock whose round trip stays well below a third of its
// lease is never lost to renewal timing: each chunk through the proxy is
// delayed by 200 ms (a round trip of 400 ms or more, against a 3 s lease)
// and the lock is held for several leases.
func TestFaultAutoRenewUnderLatency(t *testing.T) {
	t.Parallel()
	const (
		delay = 200 * time.Millisecond
		ttl   = 3 * time.Second
		hold  = 4 * ttl
	)
	ctx := context.Background()
	run := func(t *testing.T, p lockprovider.Provider, proxy *testenv.Proxy) {
		l := newLocker(t, p, &baton.Config{ReleaseTimeout: 2 * time.Second})
		lk, err := l.TryAcquire(ctx, "slow", &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: true})
		if err != nil {
			t.Fatal(err)
		}
		proxy.SetDelay(delay)
		start := time.Now()
		select {
		case <-lk.Context().Done():
			t.Errorf("auto-renewed lock lost after %v with %v per chunk (lease %v): %v",
				time.Since(start).Round(time.Millisecond), delay, ttl, context.Cause(lk.Context()))
		case <-time.After(hold):
			t.Logf("held for %v with %v per chunk (lease %v)", hold, delay, ttl)
		}
		proxy.SetDelay(0)
		_ = lk.Release(ctx)
	}
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartRedis(t)
		proxy := testenv.NewProxy(t, srv.Addr())
		c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		run(t, redisProvider(t, c), proxy)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pg := pgenv.Schema(t)
		proxy, u := testenv.ProxyURL(t, pg.URL)
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		run(t, postgresProvider(t, pool), proxy)
	})
}

// TryAcquire with context.Background() through a silent connection returns
// after Config.CallTimeout (plus the bounded release of the unknown
// attempt) with an error matching ErrUnavailable, on both backends; pgx
// alone would wait forever.
func TestFaultBlackholeWithoutDeadline(t *testing.T) {
	t.Parallel()
	const callTimeout = time.Second
	ctx := context.Background()
	run := func(t *testing.T, p lockprovider.Provider, proxy *testenv.Proxy) {
		l := newLocker(t, p, &baton.Config{CallTimeout: callTimeout})
		lk, err := l.TryAcquire(ctx, "warm", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = lk.Release(ctx)
		proxy.SetMode(testenv.Blackhole)
		start := time.Now()
		_, err = l.TryAcquire(ctx, "silent", nil)
		took := time.Since(start)
		t.Logf("TryAcquire(context.Background()) through a blackhole: %v after %v", err, took.Round(time.Millisecond))
		if !errors.Is(err, baton.ErrUnavailable) || errors.Is(err, baton.ErrNotAcquired) {
			t.Errorf("error %v; want ErrUnavailable, not ErrNotAcquired", err)
		}
		// The release of the unknown attempt waits at least 100 ms.
		if took > callTimeout+100*time.Millisecond+faultBound {
			t.Errorf("returned after %v; CallTimeout is %v", took, callTimeout)
		}
		proxy.SetMode(testenv.Pass)
	}
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartRedis(t)
		proxy := testenv.NewProxy(t, srv.Addr())
		c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		run(t, redisProvider(t, c), proxy)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pg := pgenv.Schema(t)
		proxy, u := testenv.ProxyURL(t, pg.URL)
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		run(t, postgresProvider(t, pool), proxy)
	})
}

// An acquire whose reply is lost (the proxy drops replies): the request
// took effect on the server, so the caller gets an error of unknown outcome
// (never "held", never definite), and the name is free again for others by
// AtMostFor at the latest, sooner when the Locker's release of the unknown
// attempt reaches the server.
func TestFaultDroppedAcquireReply(t *testing.T) {
	t.Parallel()
	const atMostFor = 3 * time.Second
	ctx := context.Background()
	run := func(t *testing.T, proxied, direct lockprovider.Provider, proxy *testenv.Proxy) {
		l := newLocker(t, proxied, &baton.Config{CallTimeout: time.Second})
		other := newLocker(t, direct, nil)
		// Warm up the connection through the proxy. Its first call opens
		// it, which under a loaded test run can take longer than the
		// CallTimeout; each try uses a name of its own, since a timed-out
		// one may have been granted.
		var lk *baton.Lock
		var err error
		for i := range 5 {
			if lk, err = l.TryAcquire(ctx, fmt.Sprint("warm-", i), nil); err == nil {
				break
			}
			t.Logf("warm-up %d: %v", i, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = lk.Release(ctx)
		proxy.SetMode(testenv.DropReplies)
		start := time.Now()
		_, err = l.TryAcquire(ctx, "dropped", &baton.AcquireOptions{AtMostFor: atMostFor})
		t.Logf("TryAcquire with its reply dropped: %v after %v", err, time.Since(start).Round(time.Millisecond))
		if err == nil || errors.Is(err, baton.ErrNotAcquired) || batontype.Definite(err) {
			t.Errorf("TryAcquire with its reply dropped: %v; want an error of unknown outcome", err)
		}
		var b *baton.Lock
		for {
			if b, err = other.TryAcquire(ctx, "dropped", nil); err == nil {
				break
			}
			if !errors.Is(err, baton.ErrNotAcquired) {
				t.Fatalf("other client: %v", err)
			}
			if time.Since(start) > atMostFor+faultBound {
				t.Fatalf("the name still held %v after the dropped reply (AtMostFor %v)", time.Since(start), atMostFor)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("free for another client %v after the request (AtMostFor %v)", time.Since(start).Round(time.Millisecond), atMostFor)
		_ = b.Release(ctx)
		proxy.SetMode(testenv.Pass)
	}
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartRedis(t)
		proxy := testenv.NewProxy(t, srv.Addr())
		c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		prefix := testenv.Prefix(t)
		proxied, err := redis.New(c, &redis.Config{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		direct, err := redis.New(redisenv.Server(t, srv), &redis.Config{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		run(t, proxied, direct, proxy)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pg := pgenv.Schema(t)
		proxy, u := testenv.ProxyURL(t, pg.URL)
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		run(t, postgresProvider(t, pool), postgresProvider(t, pg.Pool), proxy)
	})
}
