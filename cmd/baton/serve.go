package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/status"
)

func serveCommands() []command {
	var (
		addr    string
		actions bool
		grace   time.Duration
		refresh time.Duration
	)
	return []command{{
		group: "serve", help: "serve the status page (jobs, timeline, locks, rate limits) on --addr until interrupted",
		long: true,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address; the page has no authentication of its own: keep it on loopback or behind an authenticating proxy")
			fs.BoolVar(&actions, "actions", false, "enable the page's actions: force-release a lock, reset a rate-limit key, and run now, pause and resume a job (cluster-wide)")
			fs.DurationVar(&grace, "grace", time.Minute, "how long after its tick a run may start before the tick counts as missed (0: no grace)")
			fs.DurationVar(&refresh, "refresh", status.DefaultRefresh, "how often the page polls")
		},
		run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
			if !c.needArgs(fs, 0) {
				return exitUsage
			}
			if grace == 0 {
				grace = time.Nanosecond // status.Config reads a zero Grace as its default, one minute
			}
			return c.serve(ctx, addr, status.Config{Actions: actions, Grace: grace, Refresh: refresh})
		},
	}}
}

// serve runs the status page over the connected backends until SIGINT or
// SIGTERM. --timeout bounds each request's backend calls.
func (c *cli) serve(ctx context.Context, addr string, cfg status.Config) int {
	for _, b := range c.backends {
		sb := status.Backend{Name: b.name, Provider: b.p}
		if ctl, ok := b.p.(lockprovider.Control); ok {
			sb.Control = status.ProviderControl(ctl, "baton serve on "+lease.LockedBy())
		}
		cfg.Backends = append(cfg.Backends, sb)
	}
	cfg.Timeout = c.opts.timeout
	cfg.Logger = slog.New(slog.NewTextHandler(c.stderr, nil))
	h, err := status.New(&cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "baton: serve: %v\n", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(c.stderr, "baton: serve: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	mode := "read-only"
	if cfg.Actions {
		mode = "actions enabled"
	}
	fmt.Fprintf(c.stdout, "baton: status page on http://%s/ (%s)\n", ln.Addr(), mode)
	c.reach(ctx)
	select {
	case err = <-done:
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err = srv.Shutdown(shutCtx)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(c.stderr, "baton: serve: %v\n", err)
		return exitBackend
	}
	return exitOK
}

// reach checks each backend once at start and says what it reached: a
// ping, and the registry's live scheduler instances (which also reads
// baton's tables). A backend that fails is reported and still served: the
// page shows its errors until it answers.
func (c *cli) reach(ctx context.Context) {
	for _, b := range c.backends {
		cctx, cancel := context.WithTimeout(ctx, c.opts.timeout)
		what, err := reached(cctx, b)
		cancel()
		if err != nil {
			fmt.Fprintf(c.stdout, "baton: %s: ERROR %s (served anyway: the page shows the error until the backend answers)\n", b.name, c.explain(b, err))
			continue
		}
		fmt.Fprintf(c.stdout, "baton: %s: reached %s%s\n", b.name, c.where(b), what)
	}
}

// reached pings b and counts its registry's live instances.
func reached(ctx context.Context, b backend) (string, error) {
	if a, ok := b.p.(lockprovider.Admin); ok {
		if err := a.Ping(ctx); err != nil {
			return "", err
		}
	}
	reg, ok := b.p.(lockprovider.Registry)
	if !ok {
		return "", nil
	}
	insts, err := reg.Instances(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(", %d live scheduler instance(s)", len(insts)), nil
}

// where names what c reads on b: the Redis key prefix or the PostgreSQL
// schema and table, never the URL (it may hold a password).
func (c *cli) where(b backend) string {
	if b.name == "mysql" {
		return c.whereMySQL()
	}
	if b.name == "redis" {
		return fmt.Sprintf("(key prefix %q)", cmp.Or(c.opts.redisPrefix, redisprovider.DefaultPrefix))
	}
	return fmt.Sprintf("(schema %s, table %s)", cmp.Or(c.opts.pgSchema, "from the search_path"), cmp.Or(c.opts.pgTable, postgres.DefaultTable))
}
