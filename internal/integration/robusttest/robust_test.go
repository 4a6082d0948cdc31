package robusttest

import (
	"context"
	"net"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/robust"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/faultproxy"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/mysql"
	"github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/lockprovider/redlock"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

func TestMain(m *testing.M) {
	// The faults make go-redis log every failed dial; the history has them.
	goredis.SetLogger(quiet{})
	testenv.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// durable starts a private Redis that keeps its data across a kill
// (every write is in the append-only file before the reply), so a
// restart is a fault a lock must survive, not the loss of every lease.
func durable(t *testing.T) *testenv.RedisServer {
	return testenv.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
}

func redisClient(t testing.TB, addr string) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newRedis(t testing.TB, c redisprovider.Client, prefix string) lockprovider.Provider {
	p, err := redisprovider.New(c, &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRobustWorker is the body of the worker processes.
func TestRobustWorker(t *testing.T) {
	robust.Worker(t, func(t *testing.T, s robust.Spec) lockprovider.Provider {
		switch s.Backend {
		case "redis":
			return newRedis(t, redisClient(t, s.Addrs[0]), s.Extra)
		case "postgres":
			p, err := postgres.New(pgenv.Pool(t, s.Addrs[0]), nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		t.Fatalf("no worker for backend %q", s.Backend)
		return nil
	})
}

// Redis standalone, durable, killed and restarted; two worker
// processes beside this one, stopped past their leases.
func TestRobustRedis(t *testing.T) {
	robust.Enabled(t)
	s := durable(t)
	px := faultproxy.New(t, s.Addr())
	prefix := testenv.Prefix(t)
	robust.Run(t, robust.Target{
		Name: "redis", Proxies: []*faultproxy.Proxy{px}, Servers: []robust.Server{s},
		Provider: newRedis(t, redisClient(t, px.Addr()), prefix),
		Workers:  2, Spec: robust.Spec{Addrs: []string{px.Addr()}, Extra: prefix},
		Config: history.Config{Resends: true}, // go-redis resends after a reset
	})
}

// PostgreSQL, a private server killed and restarted; a worker process.
func TestRobustPostgres(t *testing.T) {
	robust.Enabled(t)
	s := testenv.StartPostgres(t)
	px, u := faultproxy.URL(t, s.URL())
	p, err := postgres.New(pgenv.Pool(t, u), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{
		Name: "postgres", Proxies: []*faultproxy.Proxy{px}, Servers: []robust.Server{s}, Provider: p,
		Config: history.Config{RowLocks: true}, Workers: 1, Spec: robust.Spec{Addrs: []string{u}},
	})
}

// MariaDB, a private server. Not killed: while it restarts the proxy
// accepts connections it cannot carry, each attempt is of unknown outcome
// (the driver cannot tell the handshake failed before the statement went
// out), and the retry storm's hundreds of them make the history too
// large to search. A reset fault, for the same reason, resets the open
// connections once (Target.ResetOnce).
func TestRobustMariaDB(t *testing.T) {
	robust.Enabled(t)
	s := testenv.StartMySQL(t)
	px := faultproxy.New(t, s.Addr())
	dsn := proxiedDSN(t, s, px)
	p, err := mysql.New(mysqlenv.Open(t, dsn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{Name: "mariadb", Proxies: []*faultproxy.Proxy{px}, Provider: p, ResetOnce: true,
		Config: history.Config{RowLocks: true}})
}

// proxiedDSN creates a database on s and returns a DSN of it through px.
func proxiedDSN(t *testing.T, s *testenv.MySQLServer, px *faultproxy.Proxy) string {
	name := "robust_" + testenv.Unique()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := mysqlenv.Open(t, s.DSN()).ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return mysqlenv.WithDatabase(t, "root@tcp("+px.Addr()+")/", name)
}

// Redis Cluster of three masters, each behind a proxy: the cluster
// client's dialer sends every node address through that node's proxy.
func TestRobustRedisCluster(t *testing.T) {
	robust.Enabled(t)
	cl := testenv.StartRedisCluster(t, 3)
	route := map[string]string{}
	var pxs []*faultproxy.Proxy
	for _, a := range cl.Addrs() {
		px := faultproxy.New(t, a)
		route[a] = px.Addr()
		pxs = append(pxs, px)
	}
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if r, ok := route[addr]; ok {
				addr = r
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	t.Cleanup(func() { _ = c.Close() })
	robust.Run(t, robust.Target{Name: "redis-cluster", Proxies: pxs, Provider: newRedis(t, c, testenv.Prefix(t)),
		Config: history.Config{Resends: true}})
}

// Redlock on five private masters, each behind a proxy and killed and
// restarted at times (a master restarted with its data, as the algorithm
// assumes of a persistent master).
func TestRobustRedlock(t *testing.T) {
	robust.Enabled(t)
	var pxs []*faultproxy.Proxy
	var servers []robust.Server
	var clients []*goredis.Client
	for range 5 {
		s := durable(t)
		px := faultproxy.New(t, s.Addr())
		c := goredis.NewClient(&goredis.Options{Addr: px.Addr(), DialerRetries: 1, MaxRetries: -1, DialTimeout: 2 * time.Second, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		pxs, servers, clients = append(pxs, px), append(servers, s), append(clients, c)
	}
	p, err := redlock.New(clients, &redlock.Config{Prefix: testenv.Prefix(t), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{Name: "redlock", Proxies: pxs, Servers: servers, Provider: p,
		Config: history.Config{ClientGrantTime: true, SplitVotes: true}})
}

// The ShedLock Redis mode on a durable private Redis.
func TestRobustShedLockRedis(t *testing.T) {
	robust.Enabled(t)
	s := durable(t)
	px := faultproxy.New(t, s.Addr())
	p, err := shedlock.NewRedis(redisClient(t, px.Addr()), &shedlock.RedisConfig{Environment: "env-" + testenv.Unique()})
	if err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{Name: "shedlock-redis", Proxies: []*faultproxy.Proxy{px}, Servers: []robust.Server{s}, Provider: p,
		Config: history.Config{TickAfterGrant: true, Resends: true}})
}

// The ShedLock PostgreSQL mode (database time) on a private server.
func TestRobustShedLockPostgres(t *testing.T) {
	robust.Enabled(t)
	s := testenv.StartPostgres(t)
	px, u := faultproxy.URL(t, s.URL())
	p, err := shedlock.NewPostgres(pgenv.Pool(t, u), &shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{Name: "shedlock-postgres", Proxies: []*faultproxy.Proxy{px}, Servers: []robust.Server{s}, Provider: p,
		Config: history.Config{TickAfterGrant: true, RowLocks: true}})
}
