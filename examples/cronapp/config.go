package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"
)

// Defaults: the local servers of the project's README (and compose.yaml).
const (
	defaultRedisURL    = "redis://127.0.0.1:6379/0"
	defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// config is the app's configuration. Every flag has an environment variable
// (the flag wins when both are set), so the same binary runs from a shell,
// a container or the demo runner.
type config struct {
	RedisURL    string        // REDIS_URL
	DatabaseURL string        // DATABASE_URL
	Locks       string        // CRONAPP_LOCKS: where the scheduled jobs' locks are, redis or mysql
	MySQLURL    string        // MYSQL_URL: go-sql-driver DSN with a database, for -locks mysql
	Replica     string        // REPLICA: this instance's name, stored with its leases
	RunID       string        // CRONAPP_RUN_ID: isolates tables and keys (schema cronapp_<id>, prefix cronapp:<id>:)
	Demo        bool          // CRONAPP_DEMO: 2-second schedules instead of the production ones
	Duration    time.Duration // CRONAPP_DURATION: stop by itself after this long (0: run until signalled)
	LogFormat   string        // LOG_FORMAT: text or json
	Shutdown    time.Duration // how long running jobs get to finish at shutdown

	// Demo only: the first inventory run at least PauseAfter after start
	// (on whichever replica wins it; claimed once per run in Postgres)
	// freezes for PauseFor while holding its token, then writes.
	PauseAfter time.Duration // CRONAPP_PAUSE_AFTER; 0 disables
	PauseFor   time.Duration // CRONAPP_PAUSE_FOR
	// PauseStop freezes the whole process with SIGSTOP instead of
	// sleeping in the job; something else (the demo runner) must send
	// SIGCONT after PauseFor.
	PauseStop bool // CRONAPP_PAUSE_STOP
}

var runIDPattern = regexp.MustCompile(`^[a-z0-9_]{1,40}$`)

// schema is the Postgres schema holding this run's tables.
func (c *config) schema() string {
	if c.RunID == "" {
		return "cronapp"
	}
	return "cronapp_" + c.RunID
}

// mysqlTable is the MySQL lease table of this run (-locks mysql); the
// provider names its other tables and procedures after it. A run id
// longer than 26 bytes makes the rate table's name ("_rates" more) exceed
// the provider's 40-byte limit, which New reports.
func (c *config) mysqlTable() string {
	if c.RunID == "" {
		return "cronapp_locks"
	}
	return "cronapp_" + c.RunID
}

// prefix starts every Redis key of this run.
func (c *config) prefix() string {
	if c.RunID == "" {
		return "cronapp:"
	}
	return "cronapp:" + c.RunID + ":"
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var errs []error
	envDuration := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		return d
	}
	envBool := func(name string) bool {
		v := getenv(name)
		if v == "" {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		return b
	}
	host, _ := os.Hostname()
	c := &config{}
	fs := flag.NewFlagSet("cronapp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.RedisURL, "redis", env("REDIS_URL", defaultRedisURL), "Redis URL (env REDIS_URL)")
	fs.StringVar(&c.DatabaseURL, "database", env("DATABASE_URL", defaultDatabaseURL), "PostgreSQL URL (env DATABASE_URL)")
	fs.StringVar(&c.Locks, "locks", env("CRONAPP_LOCKS", "redis"), "where the scheduled jobs' locks, ledger and registry are: redis or mysql (env CRONAPP_LOCKS)")
	fs.StringVar(&c.MySQLURL, "mysql", env("MYSQL_URL", ""), "MySQL/MariaDB DSN with a database, USER:PASSWORD@tcp(HOST:3306)/DB, for -locks mysql (env MYSQL_URL)")
	fs.StringVar(&c.Replica, "replica", env("REPLICA", host+"-"+strconv.Itoa(os.Getpid())), "name of this replica (env REPLICA)")
	fs.StringVar(&c.RunID, "run-id", env("CRONAPP_RUN_ID", ""), "isolates this run's tables and keys: [a-z0-9_], up to 40 (env CRONAPP_RUN_ID)")
	fs.BoolVar(&c.Demo, "demo", envBool("CRONAPP_DEMO"), "demo schedules: every job every 2s (env CRONAPP_DEMO)")
	fs.DurationVar(&c.Duration, "duration", envDuration("CRONAPP_DURATION", 0), "stop after this long; 0 runs until SIGINT/SIGTERM (env CRONAPP_DURATION)")
	fs.StringVar(&c.LogFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (env LOG_FORMAT)")
	fs.DurationVar(&c.Shutdown, "shutdown-timeout", 10*time.Second, "how long running jobs get to finish at shutdown")
	fs.DurationVar(&c.PauseAfter, "pause-after", envDuration("CRONAPP_PAUSE_AFTER", 0), "demo: the first inventory run this long after start freezes while holding its lock; 0 never (env CRONAPP_PAUSE_AFTER)")
	fs.DurationVar(&c.PauseFor, "pause-for", envDuration("CRONAPP_PAUSE_FOR", 3500*time.Millisecond), "demo: how long the frozen replica stays frozen (env CRONAPP_PAUSE_FOR)")
	fs.BoolVar(&c.PauseStop, "pause-stop", envBool("CRONAPP_PAUSE_STOP"), "demo: freeze the whole process with SIGSTOP; a supervisor sends SIGCONT (env CRONAPP_PAUSE_STOP)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if c.RunID != "" && !runIDPattern.MatchString(c.RunID) {
		errs = append(errs, fmt.Errorf("run id %q: want 1 to 40 of a-z, 0-9 and _", c.RunID))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log format %q: want text or json", c.LogFormat))
	}
	switch {
	case c.Locks != "redis" && c.Locks != "mysql":
		errs = append(errs, fmt.Errorf("locks %q: want redis or mysql", c.Locks))
	case c.Locks == "mysql" && c.MySQLURL == "":
		errs = append(errs, errors.New("-locks mysql needs -mysql DSN (or MYSQL_URL)"))
	}
	if c.Replica == "" {
		errs = append(errs, errors.New("replica name must not be empty"))
	}
	if c.Duration < 0 || c.Shutdown <= 0 || c.PauseAfter < 0 || c.PauseFor <= 0 {
		errs = append(errs, errors.New("durations must not be negative (shutdown-timeout and pause-for positive)"))
	}
	if c.PauseAfter > 0 && !c.Demo {
		errs = append(errs, errors.New("-pause-after is a demo feature: add -demo"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}
