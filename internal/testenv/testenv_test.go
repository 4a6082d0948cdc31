package testenv

import (
	"context"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestPrivateServers(t *testing.T) {
	ctx := context.Background()
	r := StartRedis(t)
	c := r.Client(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after restart without persistence: exists=%d err=%v", n, err)
	}

	p := StartPostgres(t)
	pool := p.Pool(t)
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
	if err := Redis(t).Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	pg := Postgres(t)
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
	p := StartPostgres(t)
	pool := p.Pool(t)
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

func TestRedisSentinel(t *testing.T) {
	t.Parallel()
	s := StartRedisSentinel(t)
	c := s.Client(t)
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The write reached the master the sentinel reported.
	if v, err := s.Master.Client(t).Get(t.Context(), "k").Result(); err != nil || v != "v" {
		t.Fatalf("master holds %q, err %v; want v", v, err)
	}
}
