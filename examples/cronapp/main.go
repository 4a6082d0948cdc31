// Command cronapp is a small service wired the way an application wires
// baton, and the subject of `make demo`: run three copies of it against the
// same Redis and PostgreSQL and each scheduled job still runs once per tick.
//
// Its jobs:
//
//   - daily-report: a scheduled job locked in Redis with AtMostFor and
//     AtLeastFor. Exactly one replica builds each report.
//   - customer-sync: runs on every replica; each takes per-customer Redis
//     locks (TryAcquire, skipping customers another replica holds) and
//     calls a third-party API through a token bucket whose state is in
//     PostgreSQL, shared by all replicas. A UNIQUE idempotency key in
//     PostgreSQL backs the lock up.
//   - inventory: a scheduled job locked in Redis that decrements stock in
//     PostgreSQL through the fence guard (last_fence), passing the lock's
//     fencing token, so a replica that was frozen past its lease cannot
//     write over a newer holder.
//
// Configuration comes from flags or the environment (REDIS_URL,
// DATABASE_URL, REPLICA, CRONAPP_DEMO, CRONAPP_DURATION, ...; see -help).
// SIGINT or SIGTERM stops it gracefully: no new ticks, running jobs finish
// and release their locks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cronapp:", err)
		os.Exit(2)
	}
	logger := newLogger(cfg.LogFormat, os.Stdout, os.Stderr).With("replica", cfg.Replica)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	if err := run(ctx, cfg, logger); err != nil {
		logger.Error("cronapp failed", "err", err)
		stop()
		os.Exit(1)
	}
}

// newLogger logs JSON lines on stdout for machines (the demo runner reads
// them) or text on stderr for people.
func newLogger(format string, stdout, stderr io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(stdout, nil))
	}
	return slog.New(slog.NewTextHandler(stderr, nil))
}
