package pgfencetest

import (
	"bufio"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
)

// Worker processes: the test binary re-executed with -test.run
// ^TestHelperProcess$ and a helperSpec in helperEnv. The parent sends
// commands as lines on stdin; the child reports lines starting with "@@ " on
// stdout (anything else there is the testing package's own output).
const helperEnv = "BATON_FENCE_HELPER"

type helperSpec struct {
	Role    string // "pause" or "witness"
	Backend string // token source: "redis", "postgres" or "mysql"
	Prefix  string // Redis key prefix
	// RedisURL is the parent's Redis: a child must not resolve its own,
	// or it would start a private server and lock on a different store.
	RedisURL  string
	PGURL     string // PostgreSQL URL with search_path set to the test schema
	MyDSN     string // MySQL DSN of the test database (backend "mysql")
	Lock      string
	AtMostFor time.Duration
	Bypass    bool // pause: write with a plain UPDATE instead of the guard
	LockCtx   bool // pause: write through the guard with the lock's Context
}

// backend is a token source and the guarded table's database.
type backend struct {
	provider lockprovider.Provider
	pool     *pgxpool.Pool // the test schema: guarded tables and PostgreSQL leases
}

func openBackend(t *testing.T, spec helperSpec) backend {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), spec.PGURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b := backend{pool: pool}
	switch spec.Backend {
	case "redis":
		opt, err := goredis.ParseURL(spec.RedisURL)
		if err != nil {
			t.Fatal(err)
		}
		opt.ContextTimeoutEnabled = true
		client := goredis.NewClient(opt)
		t.Cleanup(func() { _ = client.Close() })
		p, err := redis.New(client, &redis.Config{Prefix: spec.Prefix})
		if err != nil {
			t.Fatal(err)
		}
		b.provider = p
	case "postgres":
		p, err := postgres.New(pool, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.provider = p
	case "mysql":
		p, err := mysql.New(mysqlenv.Open(t, spec.MyDSN), nil)
		if err != nil {
			t.Fatal(err)
		}
		b.provider = p
	default:
		t.Fatalf("backend %q", spec.Backend)
	}
	return b
}

// migrate prepares the token source for spec in the parent.
func migrate(t *testing.T, b backend) {
	t.Helper()
	switch p := b.provider.(type) {
	case *postgres.Provider:
		if err := p.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	case *mysql.Provider:
		if err := p.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHelperProcess is the body of the worker processes; run directly it
// has nothing to do.
func TestHelperProcess(t *testing.T) {
	var spec helperSpec
	report := testenv.ChildSpec(t, helperEnv, &spec)
	switch spec.Role {
	case "pause":
		pauseWorker(t, spec, report)
	case "witness":
		witnessChild(t, spec, report)
	default:
		t.Fatalf("role %q", spec.Role)
	}
}

// child is a running worker process.
type child struct {
	*testenv.Child
	t     *testing.T
	lines chan string
}

func startChild(t *testing.T, spec helperSpec) *child {
	t.Helper()
	c := &child{t: t, lines: make(chan string, 100)}
	c.Child = testenv.StartChild(t, "TestHelperProcess", helperEnv, spec, func(line string) { c.lines <- line })
	go func() { <-c.Done(); close(c.lines) }()
	return c
}

func (c *child) signal(sig syscall.Signal) { c.Signal(sig) }

func (c *child) send(line string) {
	if err := c.Send(line); err != nil {
		c.t.Errorf("send %q to worker: %v", line, err)
	}
}

// expect returns the next report, which must start with prefix.
func (c *child) expect(prefix string, within time.Duration) string {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("worker exited before reporting %q; stderr:\n%s", prefix, c.Stderr())
		}
		rest, found := strings.CutPrefix(line, prefix)
		if !found {
			c.t.Fatalf("worker reported %q, want %q…", line, prefix)
		}
		return strings.TrimSpace(rest)
	case <-time.After(within):
		c.t.Fatalf("worker did not report %q within %v", prefix, within)
	}
	return ""
}

// readLine reads stdin lines into a channel for a worker.
func stdinLines() <-chan string {
	ch := make(chan string, 10)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

func newLocker(t *testing.T, p lockprovider.Provider) *baton.Locker {
	t.Helper()
	l, err := baton.NewLocker(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
