// Command benchrun measures baton beside its peers against one local Redis,
// PostgreSQL and MySQL/MariaDB and writes docs/benchmarks.md with SVG
// charts:
//
//	cd bench && go run ./cmd/benchrun -out ../docs
//
// The Redlock comparison starts its own redis-servers as the masters
// (-redis-server, or redis-server on the PATH), the MySQL comparison a
// MariaDB server of its own unless -mysql names one (-mariadbd, or
// mariadbd on the PATH; without either it is skipped); -only runs some of
// the comparisons (-only redlock, for instance).
//
// Contenders are measured in rounds at each concurrency; within a round
// they take turns in an order that rotates, so drift in the machine's load
// hits all alike, and every figure reported is the median over rounds.
// Ratios are taken within each round, then the median.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// env is what every comparison shares.
type env struct {
	redis  *goredis.Client
	pool   *pgxpool.Pool
	prefix string // of every Redis key and the PostgreSQL schema
	concs  []int
}

func main() {
	var (
		redisURL = flag.String("redis", envOr("TEST_REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis URL")
		pgURL    = flag.String("pg", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL URL")
		myDSN    = flag.String("mysql", os.Getenv("TEST_MYSQL_DSN"), "MySQL/MariaDB DSN (go-sql-driver/mysql form, e.g. root@tcp(127.0.0.1:3306)/); empty: a private server from -mariadbd")
		mariadbd = flag.String("mariadbd", findMariadbd(), "mariadbd binary for a private MySQL-compatible server when -mysql is empty")
		out      = flag.String("out", "", "directory of benchmarks.md and its charts (empty: print the report)")
		rounds   = flag.Int("rounds", 7, "rounds per comparison (the median is reported)")
		dur      = flag.Duration("d", 200*time.Millisecond, "time per contender per round")
		hdur     = flag.Duration("handoff", 1500*time.Millisecond, "time per hand-off contender per round")
		concs    = flag.String("conc", "1,16,64", "concurrencies")
		only     = flag.String("only", "", "comma-separated comparisons to run (lock-redis, lock-postgres, lock-mysql, redlock, handoff (or one of handoff-redis, handoff-mysql), rate-redis, rate-postgres, telemetry (or one of telemetry-lock-memory, telemetry-lock-redis, telemetry-rate-redis), scheduler); empty: all")
		jobs     = flag.String("jobs", "1000,10000", "scheduler job counts")
		srvCost  = flag.Bool("server-cost", false, "report the Redis server's CPU and commands per operation (INFO cpu, commandstats); meaningful on a server of its own (always on with -redis-server)")
		redisBin = flag.String("redis-server", "", "start a private Redis from this redis-server binary instead of using -redis (and the redlock comparison's masters from it; default: redis-server on the PATH)")
	)
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := run(ctx, log, config{
		redisURL: *redisURL, pgURL: *pgURL, myDSN: *myDSN, mariadbd: *mariadbd, out: *out, rounds: *rounds, d: *dur, handoff: *hdur,
		concs: ints(*concs), jobs: ints(*jobs), only: *only, serverCost: *srvCost, redisBin: *redisBin,
	}); err != nil {
		log.Error("benchrun failed", "err", err)
		os.Exit(1)
	}
}

type config struct {
	redisURL, pgURL, out, only string
	redisBin                   string
	myDSN, mariadbd            string
	rounds                     int
	d, handoff                 time.Duration
	concs, jobs                []int
	serverCost                 bool
}

func (c config) wants(id string) bool {
	if c.only == "" {
		return true
	}
	for _, s := range strings.Split(c.only, ",") {
		// "telemetry" also selects telemetry-lock-redis and the others.
		if s = strings.TrimSpace(s); s == id || strings.HasPrefix(id, s+"-") {
			return true
		}
	}
	return false
}

// wantsGroup reports whether any comparison of the group named id (those
// whose ids start with id + "-") is wanted.
func (c config) wantsGroup(id string) bool {
	if c.wants(id) {
		return true
	}
	for _, s := range strings.Split(c.only, ",") {
		if strings.HasPrefix(strings.TrimSpace(s), id+"-") {
			return true
		}
	}
	return false
}

func run(ctx context.Context, log *slog.Logger, cfg config) error {
	if cfg.rounds < 1 || cfg.d <= 0 || len(cfg.concs) == 0 {
		return fmt.Errorf("need rounds >= 1, d > 0 and a concurrency")
	}
	if cfg.redisBin != "" {
		url, stop, err := privateRedis(ctx, cfg.redisBin)
		if err != nil {
			return err
		}
		defer stop()
		cfg.redisURL, cfg.serverCost = url, true
		log.Info("private redis-server", "url", url)
	}
	opt, err := goredis.ParseURL(cfg.redisURL)
	if err != nil {
		return err
	}
	maxConc := 0
	for _, c := range cfg.concs {
		maxConc = max(maxConc, c)
	}
	opt.PoolSize = max(maxConc, waiters) + 16
	// baton's provider requires it (calls must not outlive their context);
	// every contender shares the client, so all run with it.
	opt.ContextTimeoutEnabled = true
	rc := goredis.NewClient(opt)
	defer rc.Close()
	if err := rc.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", cfg.redisURL, err)
	}
	e := &env{redis: rc, prefix: fmt.Sprintf("benchrun-%d-%d:", os.Getpid(), time.Now().Unix()), concs: cfg.concs}
	defer cleanRedis(context.WithoutCancel(ctx), rc, e.prefix)

	started := time.Now()
	rep := report{started: started}
	rep.machine = machineInfo(ctx, rc, nil)
	rep.privateRedis = cfg.redisBin != ""

	var pgProvider *postgres.Provider
	if cfg.wants("lock-postgres") || cfg.wants("rate-postgres") {
		schema := "benchrun_" + strconv.Itoa(os.Getpid())
		pcfg, err := pgxpool.ParseConfig(cfg.pgURL)
		if err != nil {
			return err
		}
		pcfg.MaxConns = int32(min(maxConc, 32))
		pcfg.ConnConfig.RuntimeParams["search_path"] = schema
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return err
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
			return fmt.Errorf("postgres at %s: %w", cfg.pgURL, err)
		}
		defer pool.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE") //nolint:errcheck // best effort
		if _, err := pool.Exec(ctx, fmt.Sprintf(rawShedLockTable, schema)); err != nil {
			return err
		}
		pgProvider, err = postgres.New(pool, &postgres.Config{Schema: schema})
		if err != nil {
			return err
		}
		if err := pgProvider.Migrate(ctx); err != nil {
			return err
		}
		e.pool = pool
		rep.machine = machineInfo(ctx, rc, pool)
		rep.privateRedis = cfg.redisBin != ""
	}

	measureCmp := func(c comparison, err error) error {
		if err != nil {
			return err
		}
		if !cfg.wants(c.id) {
			return nil
		}
		if cfg.serverCost && strings.HasSuffix(c.id, "-redis") {
			c.server = commandStats(rc)
		}
		r, err := c.run(ctx, log, cfg.rounds, cfg.d)
		if err != nil {
			return err
		}
		rep.results = append(rep.results, r)
		return nil
	}
	// addResult adds a comparison measured outside measureCmp (hand-offs).
	addResult := func(r result, err error) error {
		if err != nil {
			return err
		}
		rep.results = append(rep.results, r)
		return nil
	}
	if cfg.wants("lock-redis") {
		if err := measureCmp(redisLockComparison(e)); err != nil {
			return err
		}
	}
	if cfg.wants("lock-postgres") {
		if err := measureCmp(postgresLockComparison(e, pgProvider, e.pool), nil); err != nil {
			return err
		}
	}
	if cfg.wants("lock-mysql") || cfg.wants("handoff-mysql") {
		if cfg.myDSN == "" && cfg.mariadbd == "" && cfg.only == "" {
			log.Warn("skipped lock-mysql and handoff-mysql: no -mysql DSN and no mariadbd binary")
		} else {
			// The hand-off's 32 waiters and pollers need connections too.
			p, db, serverPid, stop, err := setupMySQL(ctx, cfg.myDSN, cfg.mariadbd, max(min(maxConc, 32), 2*waiters+4))
			if err != nil {
				return err
			}
			defer stop()
			if cfg.wants("lock-mysql") {
				if err := measureCmp(mysqlLockComparison(e, p, db, serverPid), nil); err != nil {
					return err
				}
			}
			if cfg.wants("handoff-mysql") {
				if err := addResult(runMySQLHandoff(ctx, log, db, min(cfg.rounds, 5), cfg.handoff)); err != nil {
					return err
				}
			}
		}
	}
	if cfg.wants("redlock") {
		masters, stop, err := redlockMasters(ctx, cfg.redisBin, slices.Max(redlockSizes), opt.PoolSize)
		if err != nil {
			return err
		}
		defer stop()
		if err := measureCmp(redlockComparison(e, masters)); err != nil {
			return err
		}
	}
	if cfg.wants("handoff-redis") {
		if err := addResult(runHandoffs(ctx, log, e, min(cfg.rounds, 5), cfg.handoff)); err != nil {
			return err
		}
	}
	if cfg.wants("rate-redis") {
		store, err := redisprovider.New(rc, &redisprovider.Config{Prefix: e.prefix})
		if err != nil {
			return err
		}
		if err := measureCmp(redisRateComparison(e, store)); err != nil {
			return err
		}
	}
	if cfg.wants("rate-postgres") {
		if err := measureCmp(postgresRateComparison(e, pgProvider)); err != nil {
			return err
		}
	}
	if cfg.wantsGroup("telemetry") {
		cmps, stop, err := telemetryComparisons(e)
		if err != nil {
			return err
		}
		defer stop()
		for _, c := range cmps {
			if err := measureCmp(c, nil); err != nil {
				return err
			}
		}
	}
	if cfg.wants("scheduler") {
		s, err := runScheduler(ctx, log, e, cfg.pgURL, min(cfg.rounds, 3), cfg.jobs)
		if err != nil {
			return err
		}
		rep.sched = &s
	}
	rep.took = time.Since(started)
	rep.rounds, rep.d, rep.handoff = cfg.rounds, cfg.d, cfg.handoff
	if cfg.out == "" {
		_, err := os.Stdout.WriteString(rep.markdown(""))
		return err
	}
	return rep.write(cfg.out, filepath.Join(cfg.out, "benchmarks.md"))
}

// cleanRedis deletes the run's keys (they would expire anyway).
func cleanRedis(ctx context.Context, c *goredis.Client, prefix string) {
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 500 {
			c.Unlink(ctx, keys...)
			keys = keys[:0]
		}
	}
	if len(keys) > 0 {
		c.Unlink(ctx, keys...)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
