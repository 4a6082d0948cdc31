package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// Exit codes.
const (
	exitOK       = 0 // success; jobs check: every due tick ran and succeeded
	exitProblem  = 1 // jobs check: a tick was missed, failed or never finished, or no scheduler is alive; jobs run --wait: no claim
	exitUsage    = 2 // bad command line or input
	exitNotFound = 3 // the lock or rate-limit key does not exist, or no lease is in force
	exitBackend  = 4 // a backend could not be reached or failed
	exitAborted  = 5 // the operator did not confirm
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// options are the flags every command accepts.
type options struct {
	redisURL, postgresURL string
	redisPrefix           string
	pgSchema, pgTable     string
	output                string
	timeout               time.Duration
	wide                  bool
	my                    mysqlOptions // see mysql.go
}

// register defines the common flags on fs, with the current values as
// defaults, so they are accepted before and after the command.
func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.redisURL, "redis", o.redisURL, "Redis URL, e.g. redis://localhost:6379/0 (default $BATON_REDIS_URL)")
	fs.StringVar(&o.postgresURL, "postgres", o.postgresURL, "PostgreSQL URL (default $BATON_POSTGRES_URL)")
	fs.StringVar(&o.redisPrefix, "redis-prefix", o.redisPrefix, "key prefix of the Redis provider")
	fs.StringVar(&o.pgSchema, "pg-schema", o.pgSchema, "schema of the PostgreSQL tables (default: search_path)")
	fs.StringVar(&o.pgTable, "pg-table", o.pgTable, "lease table of the PostgreSQL provider")
	fs.StringVar(&o.output, "o", o.output, "output format: table or json")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "time limit of the command (the wait for a confirmation does not count)")
	fs.BoolVar(&o.wide, "wide", o.wide, "tables: whole errors, absolute times and every replica's name (the default fits about 120 columns)")
	// The URLs may carry passwords: usage output must not print them as
	// defaults.
	fs.Lookup("redis").DefValue = ""
	fs.Lookup("postgres").DefValue = ""
	o.my.register(fs)
}

// cli is one invocation.
type cli struct {
	opts     options
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	backends []backend
	now      time.Time
	// failed is the exit code of the first backend that failed: the
	// command goes on with the other backends and exits with it.
	failed int
}

// backend is one connected provider.
type backend struct {
	name  string // "redis", "postgres" or "mysql"
	p     lockprovider.Provider
	close func()
}

type command struct {
	group, name, args, help string // name "": a one-word command (serve)
	run                     func(c *cli, ctx context.Context, fs *flag.FlagSet) int
	flags                   func(fs *flag.FlagSet)
	long                    bool // runs until interrupted: --timeout bounds each call, not the command
}

func allCommands() []command {
	return append(append(append(append(lockCommands(), jobCommands()...), replicaCommands()...), limitCommands()...), serveCommands()...)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `baton: inspect and operate baton locks, scheduled jobs and rate limits.

Usage: baton [flags] <group> <command> [flags] [args]

Commands:
`)
	for _, c := range allCommands() {
		fmt.Fprintf(w, "  %-30s %s\n", c.group+" "+c.name+" "+c.args, c.help)
	}
	fmt.Fprint(w, `
Flags (accepted before or after the command):
  --redis URL, --postgres URL   backends (or BATON_REDIS_URL, BATON_POSTGRES_URL); with several, all are shown
  --mysql DSN                   MySQL/MariaDB backend (or BATON_MYSQL_URL): USER:PASSWORD@tcp(HOST:3306)/DB or mysql://...
  --redis-prefix, --pg-schema, --pg-table, --mysql-table   provider settings when not the defaults
  -o table|json                 output format (default table)
  --wide                        tables: whole errors, absolute times, every replica (default: about 120 columns)
  --timeout D                   time limit (default 10s; a confirmation prompt does not count)

Exit codes: 0 ok; 1 jobs check found a problem (or jobs run --wait saw no claim); 2 usage; 3 not found or not held;
4 backend error (with several backends, the others' rows are still shown); 5 not confirmed.
`)
}

// groupUsage writes the commands of group, for "baton jobs" alone.
func groupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: baton [flags] %s <command> [flags] [args]\n\nCommands:\n", group)
	for _, c := range allCommands() {
		if c.group == group {
			fmt.Fprintf(w, "  %-30s %s\n", c.group+" "+c.name+" "+c.args, c.help)
		}
	}
	fmt.Fprint(w, "\nbaton --help lists every command and the common flags.\n")
}

// isGroup reports whether name is a group of two-word commands.
func isGroup(name string) bool {
	for _, c := range allCommands() {
		if c.group == name && c.name != "" {
			return true
		}
	}
	return false
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, now: time.Now()}
	c.opts = options{
		redisURL: os.Getenv("BATON_REDIS_URL"), postgresURL: os.Getenv("BATON_POSTGRES_URL"),
		output: "table", timeout: 10 * time.Second, my: mysqlEnv(),
	}
	top := flag.NewFlagSet("baton", flag.ContinueOnError)
	top.Usage = func() { usage(top.Output()) }
	c.opts.register(top)
	if code, done := parsed(top, stdout, stderr, func() error { return top.Parse(args) }); done {
		return code
	}
	rest := top.Args()
	if len(rest) > 0 && (rest[0] == "help" || isHelp(rest[0])) { // also baton help locks
		usage(stdout)
		return exitOK
	}
	if len(rest) == 0 {
		usage(stderr)
		return exitUsage
	}
	var cmd *command
	words := 2 // of the command's name
	for _, k := range allCommands() {
		if k.group == rest[0] && k.name == "" {
			cmd, words = &k, 1
		} else if len(rest) > 1 && k.group == rest[0] && k.name == rest[1] {
			cmd = &k
		}
	}
	if cmd == nil && isGroup(rest[0]) {
		switch {
		case len(rest) == 2 && isHelp(rest[1]): // baton locks --help
			groupUsage(stdout, rest[0])
			return exitOK
		case len(rest) == 1 || strings.HasPrefix(rest[1], "-"): // baton jobs
			fmt.Fprintf(stderr, "baton: %s needs a command\n", rest[0])
		default:
			fmt.Fprintf(stderr, "baton: unknown command %q\n", strings.Join(rest[:2], " "))
		}
		groupUsage(stderr, rest[0])
		return exitUsage
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "baton: unknown command %q\n", strings.Join(rest[:min(2, len(rest))], " "))
		usage(stderr)
		return exitUsage
	}
	if !cmd.long {
		// The command reports a backend that cannot be reached itself;
		// go-redis would also log every failed dial.
		goredis.SetLogger(quietLogger{})
	}
	fs := flag.NewFlagSet(strings.TrimSpace("baton "+cmd.group+" "+cmd.name), flag.ContinueOnError)
	c.opts.register(fs)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: baton %s [flags] %s\n  %s\n\nFlags:\n", strings.TrimSpace(cmd.group+" "+cmd.name), cmd.args, cmd.help)
		fs.PrintDefaults()
	}
	if code, done := parsed(fs, stdout, stderr, func() error { return parseInterleaved(fs, rest[words:]) }); done {
		return code
	}
	if c.opts.output != "table" && c.opts.output != "json" {
		fmt.Fprintf(stderr, "baton: -o must be table or json, not %q\n", c.opts.output)
		return exitUsage
	}
	if c.opts.timeout <= 0 {
		fmt.Fprintln(stderr, "baton: --timeout must be positive")
		return exitUsage
	}
	if !cmd.long {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.timeout)
		defer cancel()
	}
	if code := c.connect(ctx); code != exitOK {
		return code
	}
	defer func() {
		for _, b := range c.backends {
			b.close()
		}
	}()
	return cmd.run(c, ctx, fs)
}

// parsed runs parse with fs writing into a buffer: help that was asked
// for (-h, --help) goes to stdout with exit 0, as kubectl and gh do; a
// usage error goes to stderr with exitUsage. Afterwards fs writes to
// stderr. done is false when parsing succeeded.
func parsed(fs *flag.FlagSet, stdout, stderr io.Writer, parse func() error) (code int, done bool) {
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := parse()
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, flag.ErrHelp):
		_, _ = buf.WriteTo(stdout)
		return exitOK, true
	default:
		_, _ = buf.WriteTo(stderr)
		return exitUsage, true
	}
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "--h"
}

// quietLogger discards go-redis's own log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// parseInterleaved parses flags that may follow positional arguments
// ("locks get NAME -o json"), keeping the positional ones in fs.Args().
func parseInterleaved(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// connect opens the backends named by the flags or the environment.
func (c *cli) connect(ctx context.Context) int {
	if c.opts.redisURL == "" && c.opts.postgresURL == "" && c.opts.my.dsn == "" {
		fmt.Fprintln(c.stderr, "baton: no backend: pass --redis URL, --postgres URL and/or --mysql DSN, or set BATON_REDIS_URL / BATON_POSTGRES_URL / BATON_MYSQL_URL")
		return exitUsage
	}
	if c.opts.redisURL != "" {
		opt, err := goredis.ParseURL(c.opts.redisURL)
		if err != nil {
			fmt.Fprintf(c.stderr, "baton: %s\n", urlHint(c.source("--redis", "BATON_REDIS_URL", c.opts.redisURL), c.opts.redisURL))
			return exitUsage
		}
		opt.ContextTimeoutEnabled = true // --timeout bounds every call
		client := goredis.NewClient(opt)
		p, err := redisprovider.New(client, &redisprovider.Config{Prefix: c.opts.redisPrefix})
		if err != nil {
			_ = client.Close()
			fmt.Fprintf(c.stderr, "baton: redis: %v\n", err)
			return exitUsage
		}
		c.backends = append(c.backends, backend{name: "redis", p: p, close: func() { _ = client.Close() }})
	}
	if c.opts.postgresURL != "" {
		pool, err := pgxpool.New(ctx, c.opts.postgresURL)
		if err != nil {
			fmt.Fprintf(c.stderr, "baton: %s\n", urlHint(c.source("--postgres", "BATON_POSTGRES_URL", c.opts.postgresURL), c.opts.postgresURL))
			return exitUsage
		}
		p, err := postgres.New(pool, &postgres.Config{Schema: c.opts.pgSchema, Table: c.opts.pgTable})
		if err != nil {
			pool.Close()
			fmt.Fprintf(c.stderr, "baton: postgres: %v\n", err)
			return exitUsage
		}
		c.backends = append(c.backends, backend{name: "postgres", p: p, close: pool.Close})
	}
	return c.connectMySQL()
}

// source names where url came from: the flag, or the environment
// variable when the flag was not given.
func (c *cli) source(flag, env, url string) string {
	if os.Getenv(env) == url {
		return "$" + env
	}
	return flag
}

// fail reports a backend error, with what to do about it when known, and
// returns its exit code. A command that reads several backends goes on
// with the others and ends with c.exit, so one failing backend hides no
// other's rows.
func (c *cli) fail(b backend, what string, err error) int {
	fmt.Fprintf(c.stderr, "baton: %s: %s: %s\n", b.name, what, c.explain(b, err))
	code := exitBackend
	if errors.Is(err, batontype.ErrInvalid) {
		code = exitUsage
	}
	if c.failed == 0 {
		c.failed = code
	}
	return code
}

// exit returns the exit code of a command that read every backend: the
// first backend failure's, else code.
func (c *cli) exit(code int) int {
	if c.failed != 0 {
		return c.failed
	}
	return code
}

// needArgs checks the number of positional arguments.
func (c *cli) needArgs(fs *flag.FlagSet, n int) bool {
	if fs.NArg() != n {
		fs.Usage()
		return false
	}
	return true
}
