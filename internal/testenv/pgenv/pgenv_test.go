package pgenv_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPrivateServers(t *testing.T) {
	ctx := context.Background()
	p := testenv.StartPostgres(t)
	pool := pgenv.Pool(t, p.URL())
	if _, err := pool.Exec(ctx, "CREATE TABLE x(i int); INSERT INTO x VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	// The pool's old connections died with the server: the first use of
	// each fails, as it would for an application.
	var n int
	var err error
	for range 5 {
		if err = pool.QueryRow(ctx, "SELECT count(*) FROM x").Scan(&n); err == nil {
			break
		}
	}
	if err != nil || n != 1 {
		t.Fatalf("after crash restart: n=%d err=%v", n, err)
	}
}

func TestSharedBackends(t *testing.T) {
	ctx := context.Background()
	pg := pgenv.Schema(t)
	var sp string
	if err := pg.Pool.QueryRow(ctx, "SHOW search_path").Scan(&sp); err != nil || sp != pg.Schema {
		t.Fatalf("search_path %q err %v, want %q", sp, err, pg.Schema)
	}
}

// Pause must stop the backends that serve open connections, not only the
// postmaster: PostgreSQL children call setsid, so each is its own process
// group and a signal to the postmaster's group misses them.
func TestPostgresPauseStopsOpenConnections(t *testing.T) {
	ctx := context.Background()
	p := testenv.StartPostgres(t)
	pool := pgenv.Pool(t, p.URL())
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	p.Pause()
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	var one int
	err := pool.QueryRow(qctx, "SELECT 1").Scan(&one)
	cancel()
	p.Resume()
	if err == nil {
		t.Fatal("a query on an open connection succeeded while the server was paused")
	}
	// After Resume the pool works again (the interrupted connection may
	// have been closed; the pool opens another).
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err = pool.QueryRow(ctx, "SELECT 1").Scan(&one); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Resume: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A real client through the proxy: pgx sees a silent server while it is
// blackholed.
func TestProxyRealClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	pp := testenv.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	cfg.Host, cfg.Port = "127.0.0.1", uint16(pp.Port())
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	pp.SetMode(testenv.Blackhole)
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = conn.QueryRow(qctx, "SELECT 1").Scan(&one)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("postgres query through a blackhole: %v; want DeadlineExceeded", err)
	}
}
