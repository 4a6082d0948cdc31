package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// countingListen opens listening connections from url and remembers them.
type countingListen struct {
	url   string
	mu    sync.Mutex
	conns []*pgx.Conn
}

func (c *countingListen) open(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, c.url)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

func (c *countingListen) all() []*pgx.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*pgx.Conn(nil), c.conns...)
}

func cycle(t *testing.T, p *postgres.Provider, name string) {
	t.Helper()
	a := params(name, time.Minute)
	if _, err := p.Acquire(t.Context(), a); err != nil {
		t.Fatalf("Acquire(%q): %v", name, err)
	}
	if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: name, Owner: a.Owner}); err != nil {
		t.Fatalf("Release(%q): %v", name, err)
	}
}

func signalled(ch <-chan struct{}, within time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(within):
		return false
	}
}

// Release sends a NOTIFY only for names someone waits on: NOTIFY
// serialises commits cluster-wide, so the plain lock path must not pay it.
func TestNotifyOnlyWhenWaited(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := t.Context()
	spy, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close(context.Background())
	var channel string
	if err := spy.QueryRow(ctx, "SELECT 'baton_release:' || 'baton_locks'::regclass::oid::text").Scan(&channel); err != nil {
		t.Fatal(err)
	}
	if _, err := spy.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	spyWait := func() string {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		n, err := spy.WaitForNotification(wctx)
		if err != nil {
			return ""
		}
		return n.Payload
	}
	cycle(t, p, "quiet")
	if got := spyWait(); got != "" {
		t.Fatalf("release without waiters sent a notification (%q)", got)
	}
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "quiet", ch)
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, p, "quiet")
	if got := spyWait(); got != "quiet" {
		t.Fatalf("release with a waiter: notification payload %q, want %q", got, "quiet")
	}
	if !signalled(ch, 5*time.Second) {
		t.Fatal("waiter not signalled")
	}
	// A release that keeps the lease until AtLeastFor is not announced.
	a := params("quiet", time.Minute)
	a.AtLeastFor = time.Second
	if _, err := p.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "quiet", Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}
	if got := spyWait(); got != "" {
		t.Errorf("release within AtLeastFor announced (%q)", got)
	}
	stop()
}

// One listening connection serves every waiter; it closes with the last.
func TestNotifyListenerLifecycle(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	cl := &countingListen{url: pg.URL}
	p, err := postgres.New(pg.Pool, &postgres.Config{Listen: cl.open})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := make(chan struct{}, 1), make(chan struct{}, 1)
	stopA, err := p.NotifyRelease(ctx, "n1", a)
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := p.NotifyRelease(ctx, "n2", b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cl.all()); n != 1 {
		t.Fatalf("%d listening connections for 2 waiters, want 1", n)
	}
	cycle(t, p, "n2")
	if !signalled(b, 5*time.Second) {
		t.Fatal("n2 waiter not signalled")
	}
	if signalled(a, 50*time.Millisecond) {
		t.Fatal("n1 waiter signalled by n2's release")
	}
	stopA()
	cycle(t, p, "n2") // the listener still serves the remaining waiter
	if !signalled(b, 5*time.Second) {
		t.Fatal("n2 waiter not signalled after n1 stopped")
	}
	stopB()
	stopB()
	// The listener's goroutine has ended (stop waits for it), so reading
	// the connection's state is race-free.
	if !cl.all()[0].IsClosed() {
		t.Fatal("listener still open after the last waiter stopped")
	}
	// A new waiter opens a new connection.
	stopC, err := p.NotifyRelease(ctx, "n1", a)
	if err != nil {
		t.Fatal(err)
	}
	defer stopC()
	if n := len(cl.all()); n != 2 {
		t.Fatalf("%d listening connections opened, want 2", n)
	}
	cycle(t, p, "n1")
	if !signalled(a, 5*time.Second) {
		t.Fatal("n1 waiter not signalled after the listener restarted")
	}
}

// The default listener borrows (hijacks) a connection of a *pgxpool.Pool.
func TestNotifyFromPool(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t, nil)
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(t.Context(), "pooled", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cycle(t, p, "pooled")
	if !signalled(ch, 5*time.Second) {
		t.Fatal("waiter not signalled")
	}
}

// A broken listening connection is replaced, waiters are woken (releases
// may have been missed), and notifications flow again.
func TestNotifyReconnect(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	cl := &countingListen{url: pg.URL}
	p, err := postgres.New(pg.Pool, &postgres.Config{Listen: cl.open})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "rc", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pid := cl.all()[0].PgConn().PID()
	if _, err := pg.Pool.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if !signalled(ch, 10*time.Second) {
		t.Fatal("waiter not woken after the listener lost its connection")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cl.all()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("listener did not reconnect")
		}
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	cycle(t, p, "rc")
	if !signalled(ch, 5*time.Second) {
		t.Fatal("waiter not signalled after reconnect")
	}
}

func TestNotifyWithoutListener(t *testing.T) {
	t.Parallel()
	_, pg := newProvider(t, nil)
	ctx := t.Context()
	tx, err := pg.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	p, _ := postgres.New(tx, nil)
	if _, err := p.NotifyRelease(ctx, "x", make(chan struct{}, 1)); !errors.Is(err, postgres.ErrNoListener) {
		t.Fatalf("NotifyRelease on a pgx.Tx without Config.Listen: %v, want ErrNoListener", err)
	}
	q, _ := postgres.New(pg.Pool, nil)
	if _, err := q.NotifyRelease(ctx, "", make(chan struct{}, 1)); !errors.Is(err, batontype.ErrInvalidName) {
		t.Errorf("empty name: %v, want ErrInvalidName", err)
	}
	if _, err := q.NotifyRelease(ctx, "x", nil); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("nil channel: %v, want ErrInvalid", err)
	}
}

// Waiting on a name never acquired works, and creates no lease row.
func TestNotifyBeforeFirstAcquire(t *testing.T) {
	t.Parallel()
	p, _ := newProvider(t, nil)
	ctx := t.Context()
	ch := make(chan struct{}, 1)
	stop, err := p.NotifyRelease(ctx, "fresh", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if info, err := p.Inspect(ctx, "fresh"); err != nil || info.Exists {
		t.Errorf("Inspect of a waited-on, never acquired name = %+v, %v; want Exists false", info, err)
	}
	if infos, err := p.List(ctx); err != nil || len(infos) != 0 {
		t.Errorf("List = %+v, %v; want empty", infos, err)
	}
	a := params("fresh", time.Minute)
	l, err := p.Acquire(ctx, a)
	if err != nil || l.Token <= 0 {
		t.Fatalf("Acquire of a waited-on name: %+v, %v", l, err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "fresh", Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}
	if !signalled(ch, 5*time.Second) {
		t.Fatal("waiter not signalled")
	}
}
