package testenv

import (
	"context"
	"testing"
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
