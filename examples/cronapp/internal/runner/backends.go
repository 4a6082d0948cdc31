package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/examples/cronapp/internal/localdb"
)

// Default addresses: the project's local servers, or compose.yaml's.
const (
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

const howToGetServers = `Start both with Docker:   docker compose -f examples/cronapp/compose.yaml up -d
or point the demo at running servers with REDIS_URL / DATABASE_URL (or -redis / -database),
or install redis-server and the PostgreSQL server binaries (the demo then starts private ones).`

// Backends are the servers the demo runs against.
type Backends struct {
	RedisURL, DatabaseURL string
	MySQLURL              string // only after ResolveMySQL
	servers               []*localdb.Server
}

// Close stops the private servers the runner started, if any.
func (b *Backends) Close() {
	for _, s := range b.servers {
		s.Stop()
	}
}

// ResolveBackends finds Redis and PostgreSQL: the given URLs, which must
// answer; otherwise the default local addresses if they answer; otherwise
// private servers started from local binaries. It says how to get servers
// when none of that works.
func ResolveBackends(ctx context.Context, redisURL, databaseURL string, log io.Writer) (*Backends, error) {
	b := &Backends{}
	var err error
	b.RedisURL, err = resolve(ctx, "Redis", redisURL, DefaultRedisURL, pingRedis, localdb.StartRedis, b, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.DatabaseURL, err = resolve(ctx, "PostgreSQL", databaseURL, DefaultDatabaseURL, pingPostgres, localdb.StartPostgres, b, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func resolve(ctx context.Context, what, given, def string, ping func(context.Context, string) error,
	start func() (*localdb.Server, error), b *Backends, log io.Writer) (string, error) {
	if given != "" {
		if err := ping(ctx, given); err != nil {
			return "", fmt.Errorf("%s at %s does not answer: %w\n%s", what, redact(given), err, howToGetServers)
		}
		return given, nil
	}
	if err := ping(ctx, def); err == nil {
		return def, nil
	} else {
		fmt.Fprintf(log, "%s: nothing answers at %s (%v); starting a private server from local binaries\n", what, redact(def), err)
	}
	s, err := start()
	if errors.Is(err, localdb.ErrNoBinaries) {
		return "", fmt.Errorf("no %s: nothing answers at %s and %v\n%s", what, redact(def), err, howToGetServers)
	}
	if err != nil {
		return "", fmt.Errorf("starting a private %s: %w\n%s", what, err, howToGetServers)
	}
	b.servers = append(b.servers, s)
	// A server that accepts connections may still be starting up.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ping(ctx, s.URL)
		if err == nil {
			fmt.Fprintf(log, "%s: private server at %s (stopped when the demo ends)\n", what, s.URL)
			return s.URL, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("private %s at %s not ready: %w", what, s.URL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pingRedis(ctx context.Context, u string) error {
	opt, err := goredis.ParseURL(u)
	if err != nil {
		return err
	}
	opt.DialTimeout = time.Second
	opt.MaxRetries = -1 // a probe: refused means no
	c := goredis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

func pingPostgres(ctx context.Context, u string) error {
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		return err
	}
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Ping(ctx)
}

// redact drops the password from a URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
