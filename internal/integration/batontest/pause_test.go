package batontest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
)

// A holder in a process of its own: the test binary re-executed with
// -test.run ^TestPausedHolderProcess$ and a pausedSpec in pausedEnv. It
// acquires the lock (and, with Nested, a nested hold of it), reports
// "held", then blocks reading a line from stdin. The parent stops it past
// its trust window, writes the line while it is stopped and resumes it, so
// the read returns at once on resume, typically before the window's timer
// has run. The very first thing the holder does then is read its
// context's Err.
const pausedEnv = "BATON_PAUSED_HOLDER"

type pausedSpec struct {
	Backend   string // "redis" or "postgres"
	Prefix    string // Redis key prefix
	PGURL     string // the test schema, migrated by the parent
	Name      string
	Nested    bool
	AtMostFor time.Duration
}

// TestPausedHolderProcess is the body of a holder process; run directly it
// has nothing to do.
func TestPausedHolderProcess(t *testing.T) {
	var spec pausedSpec
	report := testenv.ChildSpec(t, pausedEnv, &spec)
	var p lockprovider.Provider
	switch spec.Backend {
	case "redis":
		rp, err := redis.New(redisenv.Client(t), &redis.Config{Prefix: spec.Prefix})
		if err != nil {
			t.Fatal(err)
		}
		p = rp
	case "postgres":
		pool, err := pgxpool.New(context.Background(), spec.PGURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		pp, err := postgres.New(pool, nil)
		if err != nil {
			t.Fatal(err)
		}
		p = pp
	default:
		t.Fatalf("backend %q", spec.Backend)
	}
	l := newLocker(t, p, nil)
	ctx := context.Background()
	lock, err := l.Acquire(ctx, spec.Name, &baton.AcquireOptions{AtMostFor: spec.AtMostFor})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Release(ctx) }()
	held := lock
	if spec.Nested {
		if held, err = l.Acquire(lock.Context(), spec.Name, nil); err != nil {
			t.Fatal(err)
		}
	}
	hctx := held.Context()
	until := held.TrustedUntil()
	report("held")
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	first := hctx.Err() // nothing before this: the timer must get no head start
	past := !time.Now().Before(until)
	cause := context.Cause(hctx)
	report("first past=%t err=%v lost=%t", past, first != nil, errors.Is(cause, baton.ErrLockLost))
}

// A holder stopped (SIGSTOP) past its trust window and resumed (SIGCONT)
// must find its lock's context ended at its first look, on Redis and on
// PostgreSQL, for the lock and for a nested hold of it.
func TestPausedHolderContext(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	postgresProvider(t, pg.Pool) // migrates the schema the children use
	for _, backend := range []string{"redis", "postgres"} {
		for _, nested := range []bool{false, true} {
			name := fmt.Sprintf("%s/nested=%t", backend, nested)
			t.Run(name, func(t *testing.T) {
				testPausedHolder(t, pausedSpec{
					Backend: backend, Prefix: testenv.Prefix(t), PGURL: pg.URL,
					Name: "paused-" + testenv.Unique(), Nested: nested, AtMostFor: 300 * time.Millisecond,
				})
			})
		}
	}
}

func testPausedHolder(t *testing.T, spec pausedSpec) {
	lines := make(chan string, 8)
	c := testenv.StartChild(t, "TestPausedHolderProcess", pausedEnv, spec, func(line string) { lines <- line })
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-c.Done():
			select {
			case l := <-lines:
				return l
			default:
			}
			t.Fatalf("holder exited; stderr:\n%s", c.Stderr())
		case <-time.After(time.Minute):
			t.Fatal("no report from the holder in a minute")
		}
		return ""
	}
	if l := next(); l != "held" {
		t.Fatalf("holder reported %q, want held", l)
	}
	c.Signal(syscall.SIGSTOP)
	// The trust window ends at most AtMostFor after the acquire was sent,
	// which was before "held": stopped for twice that, it has passed.
	time.Sleep(2 * spec.AtMostFor)
	if err := c.Send("go"); err != nil {
		t.Fatal(err)
	}
	c.Signal(syscall.SIGCONT)
	l := next()
	if !strings.HasPrefix(l, "first ") {
		t.Fatalf("holder reported %q", l)
	}
	if !strings.Contains(l, "past=true") {
		t.Fatalf("the window had not passed at the first look: %s", l)
	}
	if l != "first past=true err=true lost=true" {
		t.Errorf("first look after the resume: %s; want the context ended with ErrLockLost", l)
	}
}
