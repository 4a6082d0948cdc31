package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/status"
)

// statusPage is the status page of one demo run, served from the demo
// process over the run's Redis keys and PostgreSQL schema.
type statusPage struct {
	URL  string
	srv  *http.Server
	done chan error
	rdb  *goredis.Client
	pool *pgxpool.Pool
	my   *sql.DB // -locks mysql
}

// serveStatus starts the status page on addr (a busy addr falls back to a
// free port). The replicas' jobs, ledger, registry and locks are in Redis
// (the scheduled jobs' in MySQL with -locks mysql); the rate limit's state
// is in PostgreSQL.
func serveStatus(ctx context.Context, cfg Config, runID string) (*statusPage, error) {
	opt, err := goredis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	opt.ContextTimeoutEnabled = true // the page bounds every call with its Timeout
	sp := &statusPage{rdb: goredis.NewClient(opt), done: make(chan error, 1)}
	if sp.pool, err = pgxpool.New(ctx, cfg.DatabaseURL); err != nil {
		_ = sp.rdb.Close()
		return nil, err
	}
	rp, err := redis.New(sp.rdb, &redis.Config{Prefix: "cronapp:" + runID + ":"})
	if err != nil {
		sp.close()
		return nil, err
	}
	pp, err := postgres.New(sp.pool, &postgres.Config{Schema: "cronapp_" + runID})
	if err != nil {
		sp.close()
		return nil, err
	}
	backends := []status.Backend{{Name: "redis", Provider: rp}, {Name: "postgres", Provider: pp}}
	if cfg.Locks == "mysql" {
		if sp.my, err = openMySQL(cfg.MySQLURL); err != nil {
			sp.close()
			return nil, err
		}
		mp, err := mysqlProvider(sp.my, runID)
		if err != nil {
			sp.close()
			return nil, err
		}
		backends = append(backends, status.Backend{Name: "mysql", Provider: mp})
	}
	h, err := status.New(&status.Config{
		Backends: backends,
		// The third-party API's quota, as cronapp defines it, so the page
		// shows how much of it remains.
		Limits: func(key string) []batontype.RateLimit {
			return []batontype.RateLimit{{Algorithm: batontype.TokenBucket, Rate: 5, Period: time.Second, Burst: 10}}
		},
		Grace: 2 * time.Second,
	})
	if err != nil {
		sp.close()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.StatusAddr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			sp.close()
			return nil, err
		}
	}
	sp.URL = fmt.Sprintf("http://%s/", ln.Addr())
	sp.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { sp.done <- sp.srv.Serve(ln) }()
	return sp, nil
}

// stop shuts the page down and closes its connections.
func (sp *statusPage) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := sp.srv.Shutdown(ctx)
	if serr := <-sp.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	sp.close()
	return err
}

func (sp *statusPage) close() {
	_ = sp.rdb.Close()
	sp.pool.Close()
	if sp.my != nil {
		_ = sp.my.Close()
	}
}
