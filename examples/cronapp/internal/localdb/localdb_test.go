package localdb

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The demo's fallback when nothing answers on the default addresses:
// private servers from the local binaries, usable at once, gone after
// Stop.
func TestStartServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	r, err := StartRedis()
	if err != nil {
		t.Fatalf("StartRedis: %v", err)
	}
	opt, err := goredis.ParseURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("ping %s: %v", r.URL, err)
	}
	_ = c.Close()
	r.Stop()
	if _, err := os.Stat(r.dir); !os.IsNotExist(err) {
		t.Errorf("redis dir %s left behind: %v", r.dir, err)
	}

	p, err := StartPostgres()
	if err != nil {
		t.Fatalf("StartPostgres: %v", err)
	}
	defer p.Stop()
	var ok bool
	for i := 0; i < 300 && !ok; i++ { // accepting TCP comes before accepting queries
		pool, err := pgxpool.New(ctx, p.URL)
		if err == nil {
			ok = pool.Ping(ctx) == nil
			pool.Close()
		}
		if !ok {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !ok {
		t.Fatalf("postgres at %s never answered", p.URL)
	}
}

// The private MariaDB of make demo DEMOFLAGS='-locks mysql': root without
// a password over TCP, gone after Stop.
func TestStartMySQL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := StartMySQL()
	if err != nil {
		t.Fatalf("StartMySQL: %v", err)
	}
	db, err := sql.Open("mysql", s.URL)
	if err != nil {
		t.Fatal(err)
	}
	var ok bool
	for i := 0; i < 300 && !ok; i++ { // accepting TCP may come before accepting queries
		ok = db.PingContext(ctx) == nil
		if !ok {
			time.Sleep(50 * time.Millisecond)
		}
	}
	_ = db.Close()
	if !ok {
		t.Errorf("mysql at %s never answered", s.URL)
	}
	s.Stop()
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("mysql dir %s left behind: %v", s.dir, err)
	}
}
