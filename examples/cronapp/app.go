package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/examples/cronapp/internal/wire"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/ratelimit"
	"github.com/baton-go/baton/scheduler"
)

// app holds what the jobs share.
type app struct {
	cfg     *config
	log     *slog.Logger
	pool    *pgxpool.Pool
	t       tables
	locker  *baton.Locker      // per-customer locks, on Redis
	limiter *ratelimit.Limiter // the third-party API's quota, on PostgreSQL
	api     *thirdPartyAPI
	guard   *pgfence.Guard // inventory rows, fenced by the inventory lock's tokens
	start   time.Time
	paused  atomic.Bool // this replica has done its demo pause

	customerAtMostFor, customerAtLeast time.Duration
}

// tables are the quoted, schema-qualified names of the app's tables.
type tables struct {
	schema, witness, inventory, control string
}

func newTables(schema string) tables {
	q := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	return tables{
		schema:    pgx.Identifier{schema}.Sanitize(),
		witness:   q("witness"),
		inventory: q("inventory"),
		control:   q("demo_control"),
	}
}

func run(ctx context.Context, cfg *config, log *slog.Logger) error {
	start := time.Now()
	setupCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	ropt, err := goredis.ParseURL(cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	ropt.ContextTimeoutEnabled = true // the provider requires deadlines to hold
	rdb := goredis.NewClient(ropt)
	defer rdb.Close()
	if err := rdb.Ping(setupCtx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", ropt.Addr, err)
	}
	pool, err := pgxpool.New(setupCtx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	if err := pool.Ping(setupCtx); err != nil {
		return fmt.Errorf("postgres at %s: %w", redactURL(cfg.DatabaseURL), err)
	}

	// Redis holds the locks: the scheduled jobs' and the customers'.
	recordTTL := time.Duration(0) // provider default
	if cfg.RunID != "" {
		recordTTL = time.Hour // demo runs leave nothing behind for long
	}
	rprov, err := redis.New(rdb, &redis.Config{Prefix: cfg.prefix(), RecordTTL: recordTTL, Logger: log})
	if err != nil {
		return err
	}
	// PostgreSQL holds the rate limit's state and the fenced inventory.
	pprov, err := postgres.New(pool, &postgres.Config{Schema: cfg.schema(), Logger: log})
	if err != nil {
		return err
	}
	a := &app{cfg: cfg, log: log, pool: pool, t: newTables(cfg.schema()), api: newThirdPartyAPI(), start: start}
	if a.guard, err = pgfence.NewGuard(cfg.schema()+".inventory", "product_id", nil); err != nil {
		return err
	}
	if err := a.setup(setupCtx, pprov); err != nil {
		return fmt.Errorf("schema setup: %w", err)
	}
	if a.locker, err = baton.NewLocker(rprov, &baton.Config{Logger: log, LockedBy: cfg.Replica}); err != nil {
		return err
	}
	// The third-party API's quota: a bucket of 10 calls, refilled at 5 per
	// second.
	if a.limiter, err = ratelimit.New(pprov, []ratelimit.Limit{{
		Algorithm: ratelimit.TokenBucket, Rate: 5, Period: time.Second, Burst: 10,
	}}, nil); err != nil {
		return err
	}

	// The scheduled jobs' locks, with their ledger and registry: Redis by
	// default, or MySQL (-locks mysql). The customers' locks stay on Redis.
	var jobLocks lockprovider.Provider = rprov
	if cfg.Locks == "mysql" {
		mprov, closeDB, err := openMySQL(setupCtx, cfg, log)
		if err != nil {
			return err
		}
		defer closeDB()
		jobLocks = mprov
	}

	// The ledger records every claimed tick (replica, token, outcome) in
	// the claim and release themselves, for the status page's timeline.
	sched, err := scheduler.New(jobLocks, &scheduler.Config{Logger: log, LockedBy: cfg.Replica, Observer: a.hooks(), Ledger: true})
	if err != nil {
		return err
	}
	jobs, infos, err := a.register(sched)
	if err != nil {
		_ = sched.Close()
		return err
	}
	if err := sched.Start(); err != nil {
		return err
	}
	log.Info(wire.MsgReady, "pid", os.Getpid(), "schema", cfg.schema(), "prefix", cfg.prefix(), "locks", cfg.Locks,
		"jobs", infos, "setup", time.Since(start).Round(time.Millisecond))

	<-ctx.Done()
	log.Info("shutting down: no new ticks; running jobs finish and release their locks", "cause", context.Cause(ctx))
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Shutdown)
	defer cancel()
	serr := sched.Shutdown(sctx)
	for _, j := range jobs {
		st := j.Stats()
		log.Info("job stats", "job", j.Name(), "runs", st.Runs, "skips", st.Skips, "failures", st.Failures, "lock_lost", st.LockLost)
	}
	if serr != nil {
		return fmt.Errorf("shutdown: jobs still running after %v were cancelled: %w", cfg.Shutdown, serr)
	}
	log.Info(wire.MsgStopped, "api_calls", a.api.calls.Load())
	return nil
}

// setup creates the schema and tables, once per run, under an advisory lock
// so that replicas starting together do not race on CREATE ... IF NOT EXISTS
// (which is not safe against concurrent creators).
func (a *app) setup(ctx context.Context, pprov *postgres.Provider) error {
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	key := "cronapp setup " + a.cfg.schema()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", key); err != nil {
		return err
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", key)
	}()
	stmts := []string{
		"CREATE SCHEMA IF NOT EXISTS " + a.t.schema,
		// One row per run of a job per tick (and per customer sync per
		// tick): UNIQUE turns a second run into an error the demo counts.
		`CREATE TABLE IF NOT EXISTS ` + a.t.witness + ` (
			job text NOT NULL, tick timestamptz NOT NULL, replica text NOT NULL,
			token bigint NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp(),
			UNIQUE (job, tick))`,
		`CREATE TABLE IF NOT EXISTS ` + a.t.inventory + ` (
			product_id int PRIMARY KEY, name text NOT NULL, stock int NOT NULL)`,
		`INSERT INTO ` + a.t.inventory + ` VALUES (1, 'widget', 1000) ON CONFLICT DO NOTHING`,
		// Demo only: which replica froze, so that only one does per run.
		`CREATE TABLE IF NOT EXISTS ` + a.t.control + ` (
			id int PRIMARY KEY, paused_by text, paused_tick timestamptz)`,
		`INSERT INTO ` + a.t.control + ` (id) VALUES (1) ON CONFLICT DO NOTHING`,
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	if err := pprov.Migrate(ctx); err != nil { // the rate-limit (and lease) tables
		return err
	}
	return a.guard.AddColumn(ctx, conn) // inventory.last_fence
}

// witness records that job ran for tick. It returns errDuplicate if the
// tick had already run: with a working lock that never happens.
func (a *app) witness(ctx context.Context, job string, tick time.Time, token int64) error {
	tag, err := a.pool.Exec(ctx, "INSERT INTO "+a.t.witness+" (job, tick, replica, token) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
		job, tick, a.cfg.Replica, token)
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errDuplicate
	}
	return nil
}

var errDuplicate = errors.New("this tick already ran (witness row exists)")

// redactURL drops the password from a URL for logs.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
