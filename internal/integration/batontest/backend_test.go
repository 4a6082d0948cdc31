package batontest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
)

func redisProvider(t testing.TB, c *goredis.Client) *redis.Provider {
	t.Helper()
	p, err := redis.New(c, &redis.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func postgresProvider(t *testing.T, pool *pgxpool.Pool) *postgres.Provider {
	t.Helper()
	p, err := postgres.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHandoffRedis(t *testing.T) {
	t.Parallel()
	p := redisProvider(t, redisenv.Client(t))
	for _, notify := range []bool{true, false} {
		t.Run(map[bool]string{true: "notify", false: "poll"}[notify], func(t *testing.T) {
			testHandoff(t, p, notify)
		})
	}
}

// Each hand-off on PostgreSQL costs two commits (release, acquire); on the
// shared server they wait for a WAL flush, on the private one (fsync off)
// they do not, which isolates what notifications save.
func TestHandoffPostgres(t *testing.T) {
	t.Parallel()
	shared := postgresProvider(t, pgenv.Schema(t).Pool)
	private := postgresProvider(t, pgenv.Pool(t, testenv.StartPostgres(t).URL()))
	for _, c := range []struct {
		name string
		p    lockprovider.Provider
	}{{"shared", shared}, {"private-nofsync", private}} {
		for _, notify := range []bool{true, false} {
			t.Run(c.name+"/"+map[bool]string{true: "notify", false: "poll"}[notify], func(t *testing.T) {
				testHandoff(t, c.p, notify)
			})
		}
	}
}

// testAutoRenewOutage holds a lock with auto-renew through a job five times
// its TTL, then cuts the lock holder's connections (it must survive: the
// client reconnects), then takes the server down: Context must report the
// loss within about the trust window.
func testAutoRenewOutage(t *testing.T, p lockprovider.Provider, cutConns func(), down func()) {
	const ttl = 600 * time.Millisecond
	ctx := context.Background()
	l := newLocker(t, p, nil)
	other := newLocker(t, p, nil)
	lock, err := l.TryAcquire(ctx, "renewed", &baton.AcquireOptions{AtMostFor: ttl, AutoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release(ctx)
	first := lock.Lease().Until
	end := time.Now().Add(5 * ttl)
	for i := 0; time.Now().Before(end); i++ {
		if i == 10 {
			cutConns()
		}
		// Right after the cut, the other client's first calls may fail
		// on dead connections; it must never get the lock.
		if _, err := other.TryAcquire(ctx, "renewed", nil); err == nil {
			t.Fatal("renewed lock taken")
		} else if !errors.Is(err, baton.ErrNotAcquired) {
			t.Logf("other TryAcquire: %v", err)
		}
		time.Sleep(ttl / 10)
	}
	if err := lock.Context().Err(); err != nil {
		t.Fatalf("lost during the job: %v", context.Cause(lock.Context()))
	}
	if !lock.Lease().Until.After(first.Add(3 * ttl)) {
		t.Errorf("lease not extended: %v then %v", first, lock.Lease().Until)
	}

	down()
	downAt := time.Now()
	select {
	case <-lock.Context().Done():
	case <-time.After(10 * ttl):
		t.Fatalf("Context not done %v after the server went down", 10*ttl)
	}
	after := time.Since(downAt)
	t.Logf("loss reported %v after the server went down (TTL %v)", after.Round(time.Millisecond), ttl)
	if cause := context.Cause(lock.Context()); !errors.Is(cause, baton.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", cause)
	}
	// The window ends at most one TTL after the last successful renewal,
	// which was sent before the outage; allow generous scheduling slack
	// on a loaded machine.
	if after > 2*ttl {
		t.Errorf("loss reported %v after the outage; the trust window is %v", after, ttl)
	}
}

func TestAutoRenewOutageRedis(t *testing.T) {
	t.Parallel()
	srv := testenv.StartRedis(t)
	c := redisenv.Server(t, srv)
	admin := redisenv.Server(t, srv)
	testAutoRenewOutage(t, redisProvider(t, c),
		func() {
			if err := admin.Do(context.Background(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
				t.Errorf("CLIENT KILL: %v", err)
			}
		},
		srv.Kill)
}

func TestAutoRenewOutagePostgres(t *testing.T) {
	t.Parallel()
	srv := testenv.StartPostgres(t)
	pool := pgenv.Pool(t, srv.URL())
	admin, err := pgxpool.New(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	testAutoRenewOutage(t, postgresProvider(t, pool),
		func() {
			var n int
			err := admin.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n)
			if err != nil || n == 0 {
				t.Errorf("pg_terminate_backend: %d terminated, %v", n, err)
			}
		},
		func() { admin.Close(); srv.Kill() })
}

func BenchmarkTryAcquireReleaseRedis(b *testing.B) {
	benchLock(b, redisProvider(b, redisenv.Client(b)))
}

func BenchmarkTryAcquireReleasePostgres(b *testing.B) {
	pg := pgenv.Schema(b)
	p, err := postgres.New(pg.Pool, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	benchLock(b, p)
}

// On MySQL the waiters are woken by the provider's poller (no
// LISTEN/NOTIFY), or poll themselves.
func TestHandoffMySQL(t *testing.T) {
	t.Parallel()
	my := mysqlenv.Database(t)
	p, err := mysql.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, notify := range []bool{true, false} {
		t.Run(map[bool]string{true: "notify", false: "poll"}[notify], func(t *testing.T) {
			testHandoff(t, p, notify)
		})
	}
}
