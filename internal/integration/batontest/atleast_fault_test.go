package batontest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/atleastcheck"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
	"github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/lockprovider/redlock"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// An acquire whose round trip is slow (the proxy delays every chunk), then
// an Extend over a fast connection and an early Release: the backend set the
// AtLeastFor bound when the slow request reached it, so the Extend must not
// ask for a bound earlier than that one. Another owner is granted the name
// no earlier than GrantedAt + AtLeastFor, on the backend's clock.
func TestFaultExtendKeepsAtLeastBound(t *testing.T) {
	t.Parallel()
	// The backends store times to the millisecond; ShedLock's MySQL
	// TIMESTAMP(3) columns and Redlock's client-side times round too.
	const rounding = 2 * time.Millisecond
	run := func(t *testing.T, proxied, direct lockprovider.Provider, proxies ...*testenv.Proxy) {
		atleastcheck.ExtendKeepsBound(t, proxied, direct, rounding, proxies...)
	}

	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartRedis(t)
		proxy := testenv.NewProxy(t, srv.Addr())
		c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		cfg := &redis.Config{Prefix: testenv.Prefix(t)}
		newP := func(c redis.Client) *redis.Provider {
			p, err := redis.New(c, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		run(t, newP(c), newP(redisenv.Server(t, srv)), proxy)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pg := pgenv.Schema(t)
		proxy, u := testenv.ProxyURL(t, pg.URL)
		pool := proxiedPool(t, u)
		run(t, postgresProvider(t, pool), postgresProvider(t, pg.Pool), proxy)
	})
	t.Run("mysql", func(t *testing.T) {
		t.Parallel()
		my := mysqlenv.Database(t)
		proxy, db := proxiedMySQL(t, my.DSN)
		newP := func(db mysql.DB) *mysql.Provider {
			p, err := mysql.New(db, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		direct := newP(my.DB)
		if err := direct.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		run(t, newP(db), direct, proxy)
	})
	t.Run("redlock", func(t *testing.T) {
		t.Parallel()
		const n = 3
		prefix := testenv.Prefix(t)
		var proxies []*testenv.Proxy
		var slow, fast []*goredis.Client
		for range n {
			srv := testenv.StartRedis(t)
			proxy := testenv.NewProxy(t, srv.Addr())
			c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			proxies, slow, fast = append(proxies, proxy), append(slow, c), append(fast, redisenv.Server(t, srv))
		}
		newP := func(cs []*goredis.Client) *redlock.Provider {
			p, err := redlock.New(cs, &redlock.Config{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		run(t, newP(slow), newP(fast), proxies...)
	})
	t.Run("shedlock-postgres", func(t *testing.T) {
		t.Parallel()
		pg := pgenv.Schema(t)
		proxy, u := testenv.ProxyURL(t, pg.URL)
		pool := proxiedPool(t, u)
		newP := func(db shedlock.DB) *shedlock.Postgres {
			p, err := shedlock.NewPostgres(db, &shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		direct := newP(pg.Pool)
		if err := direct.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		slow := newP(pool)
		if err := slow.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		run(t, slow, direct, proxy)
	})
	t.Run("shedlock-mysql", func(t *testing.T) {
		t.Parallel()
		my := mysqlenv.Database(t)
		proxy, db := proxiedMySQL(t, my.DSN)
		newP := func(db shedlock.SQLDB) *shedlock.MySQL {
			p, err := shedlock.NewMySQL(db, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		direct := newP(my.DB)
		if err := direct.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		slow := newP(db)
		if err := slow.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		run(t, slow, direct, proxy)
	})
	t.Run("shedlock-redis", func(t *testing.T) {
		t.Parallel()
		srv := testenv.StartRedis(t)
		proxy := testenv.NewProxy(t, srv.Addr())
		c := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		cfg := &shedlock.RedisConfig{KeyPrefix: testenv.Prefix(t)}
		slow, err := shedlock.NewRedis(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := shedlock.NewRedis(redisenv.Server(t, srv), cfg)
		if err != nil {
			t.Fatal(err)
		}
		run(t, slow, direct, proxy)
	})
}

func proxiedPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// proxiedMySQL returns a proxy in front of dsn's server and a handle that
// connects through it.
func proxiedMySQL(t *testing.T, dsn string) (*testenv.Proxy, *sql.DB) {
	t.Helper()
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	return proxy, mysqlenv.Open(t, cfg.FormatDSN())
}
