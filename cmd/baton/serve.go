package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/baton-go/baton/batontype"
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
		limits  limitFlags
		hosts   hostFlags
		token   string
	)
	return []command{{
		group: "serve", help: "serve the status page (jobs, timeline, locks, rate limits) on --addr until interrupted",
		long: true,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address; without --token-file the page has no authentication: keep it on loopback or behind an authenticating proxy")
			fs.Var(&hosts, "allowed-host", "a host name the page answers for (repeatable), besides localhost and IP addresses: a request for any other Host gets 403, which stops a hostile page that had its name resolve to this server (DNS rebinding); \"*\" answers for any")
			fs.StringVar(&token, "token-file", "", "a file whose first line is the page's token: every request but /healthz must then send it, as a bearer token or as a basic-auth password (browsers prompt); $BATON_SERVE_TOKEN gives it too")
			fs.BoolVar(&actions, "actions", false, "enable the page's actions: force-release a lock, reset a rate-limit key, and run now, pause and resume a job (cluster-wide)")
			fs.DurationVar(&grace, "grace", time.Minute, "how long after its tick a run may start before the tick counts as missed (0: no grace)")
			fs.DurationVar(&refresh, "refresh", status.DefaultRefresh, "how often the page polls")
			fs.Var(&limits, "limit", "the application's limit, <algorithm>:<limit>/<period>[:<burst>] (repeatable), as for limits get: the Rate limits view shows what remains of each key whose state has its algorithm and period, and marks keys near or over it")
		},
		run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
			if !c.needArgs(fs, 0) {
				return exitUsage
			}
			if grace == 0 {
				grace = time.Nanosecond // status.Config reads a zero Grace as its default, one minute
			}
			tok, err := serveToken(token)
			if err != nil {
				fmt.Fprintf(c.stderr, "baton: serve: %v\n", err)
				return exitUsage
			}
			cfg := status.Config{Actions: actions, Grace: grace, Refresh: refresh, AllowedHosts: hosts, Token: tok}
			if len(limits) > 0 {
				lims := []batontype.RateLimit(limits)
				cfg.Limits = func(string) []batontype.RateLimit { return lims }
			}
			return c.serve(ctx, addr, cfg)
		},
	}}
}

// hostFlags collects --allowed-host.
type hostFlags []string

func (h *hostFlags) String() string { return strings.Join(*h, ",") }

func (h *hostFlags) Set(s string) error {
	*h = append(*h, s)
	return nil
}

// serveToken reads the page's token from the first line of path, or from
// $BATON_SERVE_TOKEN when path is empty; "" means none.
func serveToken(path string) (string, error) {
	if path == "" {
		return os.Getenv("BATON_SERVE_TOKEN"), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("--token-file %s: the first line is empty", path)
	}
	return line, nil
}

// serve runs the status page over the connected backends until SIGINT or
// SIGTERM. --timeout bounds each request's backend calls.
func (c *cli) serve(ctx context.Context, addr string, cfg status.Config) int {
	for _, b := range c.backends {
		sb := status.Backend{Name: b.name, Provider: b.p, Source: c.reads(b.name)}
		if ctl, ok := b.p.(lockprovider.Control); ok {
			sb.Control = status.ProviderControl(ctl, "serve:"+lease.LockedBy())
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
	if cfg.Token != "" {
		mode += ", token required"
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

// reads says what a backend reads, for the page's empty states and the
// start-up report: the Redis prefix or the PostgreSQL schema and table,
// and the server, never its password.
func (c *cli) reads(name string) string {
	host := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return ""
		}
		return " on " + u.Host + u.Path
	}
	switch name {
	case "redis":
		prefix := c.opts.redisPrefix
		if prefix == "" {
			prefix = redisprovider.DefaultPrefix
		}
		return "prefix " + strconv.Quote(prefix) + host(c.opts.redisURL)
	case "postgres":
		schema := c.opts.pgSchema
		if schema == "" {
			schema = "search_path"
		}
		table := c.opts.pgTable
		if table == "" {
			table = postgres.DefaultTable
		}
		return "schema " + schema + ", table " + table + host(c.opts.postgresURL)
	case "mysql":
		return c.readsMySQL()
	}
	return ""
}

// looked says where a command looked for what it did not find, so that a
// wrong --redis-prefix, --pg-schema or --pg-table reads as such rather
// than as a missing job.
func (c *cli) looked() string {
	var where []string
	for _, b := range c.backends {
		where = append(where, b.name+": "+c.reads(b.name))
	}
	return "looked in " + strings.Join(where, "; ") + "; a wrong --redis-prefix, --pg-schema, --pg-table or database looks the same"
}

// reach checks each backend once at start and says what it reached: a
// ping, the registry's live scheduler instances and jobs, and the locks
// held (which also reads baton's tables). A backend that fails is
// reported with what to do, and still served: the page shows it as
// unknown until it answers.
func (c *cli) reach(ctx context.Context) {
	for _, b := range c.backends {
		cctx, cancel := context.WithTimeout(ctx, c.opts.timeout)
		what, err := reached(cctx, b)
		cancel()
		if err != nil {
			fmt.Fprintf(c.stdout, "baton: %s (%s): NOT reached: %s (served anyway: the page shows it as unknown until it answers)\n", b.name, c.reads(b.name), c.explain(b, err))
			continue
		}
		fmt.Fprintf(c.stdout, "baton: %s (%s): reached: %s\n", b.name, c.reads(b.name), what)
	}
}

// reached pings b, counts its registry's live instances and their jobs,
// and the locks held.
func reached(ctx context.Context, b backend) (string, error) {
	if a, ok := b.p.(lockprovider.Admin); ok {
		if err := a.Ping(ctx); err != nil {
			return "", err
		}
	}
	var what []string
	if reg, ok := b.p.(lockprovider.Registry); ok {
		insts, err := reg.Instances(ctx)
		if err != nil {
			return "", err
		}
		jobs := map[string]bool{}
		for _, in := range insts {
			for _, j := range in.Jobs {
				jobs[j.Name] = true
			}
		}
		what = append(what, fmt.Sprintf("%d scheduler instances, %d jobs", len(insts), len(jobs)))
	}
	if in, ok := b.p.(lockprovider.Inspector); ok {
		infos, err := in.List(ctx)
		if err != nil {
			return "", err
		}
		held := 0
		for _, i := range infos {
			if i.Held {
				held++
			}
		}
		what = append(what, fmt.Sprintf("%d locks held", held))
	}
	return strings.Join(what, ", "), nil
}
