package main

import (
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
			fs.BoolVar(&actions, "actions", false, "enable force-release and rate-limit reset buttons")
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
