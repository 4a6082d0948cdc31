// Command demo runs the cronapp demo (`make demo`): three replicas of
// cronapp as separate processes against one Redis and one PostgreSQL, a
// live log, and a summary with the exactly-once check. It exits 0 only if
// every tick of every locked job ran exactly once (and the other checks
// held), 1 if a check failed, 2 if the demo could not run.
//
// It uses REDIS_URL and DATABASE_URL (or -redis, -database) when given;
// otherwise the local defaults if they answer; otherwise it starts private
// servers from the local redis-server and PostgreSQL binaries; otherwise it
// says how to start some (compose.yaml).
//
// With -locks mysql the scheduled jobs' locks, run ledger and registry are
// on MySQL or MariaDB instead of Redis: MYSQL_URL (or -mysql) when given,
// otherwise a private server started from the local MariaDB binaries.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/baton-go/baton/examples/cronapp/internal/runner"
)

func main() { os.Exit(run()) }

func run() int {
	var (
		cfg     runner.Config
		summary string
	)
	flag.StringVar(&cfg.App, "app", "", "cronapp binary; empty builds ./examples/cronapp with `go build` (run from the module root)")
	flag.IntVar(&cfg.Replicas, "replicas", 3, "number of replicas")
	flag.DurationVar(&cfg.Duration, "duration", 30*time.Second, "how long the replicas run once all are ready")
	flag.StringVar(&cfg.RedisURL, "redis", os.Getenv("REDIS_URL"), "Redis URL (env REDIS_URL); empty tries "+runner.DefaultRedisURL+", then a private server")
	flag.StringVar(&cfg.DatabaseURL, "database", os.Getenv("DATABASE_URL"), "PostgreSQL URL (env DATABASE_URL); empty tries "+runner.DefaultDatabaseURL+", then a private server")
	flag.StringVar(&cfg.Locks, "locks", "redis", "where the scheduled jobs' locks, ledger and registry are: redis, or mysql (MySQL/MariaDB; the customers' locks stay on Redis)")
	flag.StringVar(&cfg.MySQLURL, "mysql", os.Getenv("MYSQL_URL"), "with -locks mysql: DSN with a database, USER:PASSWORD@tcp(HOST:3306)/DB (env MYSQL_URL); empty starts a private MariaDB")
	flag.DurationVar(&cfg.PauseAfter, "pause-after", 0, "the first inventory run this long after start freezes past its lease; 0 means 30% of -duration, negative never")
	flag.DurationVar(&cfg.PauseFor, "pause-for", 3500*time.Millisecond, "how long the frozen replica stays frozen")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the run's schema and Redis keys for inspection")
	flag.BoolVar(&cfg.Quiet, "quiet", false, "print only the summary")
	flag.StringVar(&cfg.StatusAddr, "status-addr", "127.0.0.1:8089", "serve the status page here while the replicas run (a busy port falls back to a free one); empty disables")
	flag.StringVar(&summary, "summary-json", "", "also write the summary as JSON to this file")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo: unexpected arguments %q\n", flag.Args())
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.App == "" {
		dir, err := os.MkdirTemp("", "cronapp-demo-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			return 2
		}
		defer os.RemoveAll(dir)
		cfg.App = filepath.Join(dir, "cronapp")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.App, "./examples/cronapp")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "demo: go build ./examples/cronapp: %v (run from the module root, or pass -app)\n", err)
			return 2
		}
	}

	be, err := runner.ResolveBackends(ctx, cfg.RedisURL, cfg.DatabaseURL, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	defer be.Close()
	cfg.RedisURL, cfg.DatabaseURL = be.RedisURL, be.DatabaseURL
	if cfg.Locks == "mysql" {
		if err := runner.ResolveMySQL(ctx, cfg.MySQLURL, be, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			return 2
		}
		cfg.MySQLURL = be.MySQLURL
	}
	cfg.Out = os.Stdout

	sum, err := runner.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	if summary != "" {
		b, _ := json.MarshalIndent(sum, "", "  ")
		if err := os.WriteFile(summary, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			return 2
		}
	}
	if !sum.Pass {
		return 1
	}
	return 0
}
