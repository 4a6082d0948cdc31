package mysqlenv_test

import (
	"context"
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A database per test, on the shared server.
func TestDatabase(t *testing.T) {
	my := mysqlenv.Database(t)
	var name string
	if err := my.DB.QueryRowContext(t.Context(), "SELECT DATABASE()").Scan(&name); err != nil || name != my.Database {
		t.Fatalf("DATABASE() = %q (%v), want %q", name, err, my.Database)
	}
}

// A private server keeps committed data across a crash and restart.
func TestPrivateServer(t *testing.T) {
	ctx := context.Background()
	s := testenv.StartMySQL(t)
	db := mysqlenv.Open(t, s.DSN())
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.x (i INT) ENGINE=InnoDB", "INSERT INTO d.x VALUES (1)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	// The handle's old connections died with the server: the first use
	// of each fails, as it would for an application.
	var n int
	var err error
	for range 5 {
		if err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.x").Scan(&n); err == nil {
			break
		}
	}
	if err != nil || n != 1 {
		t.Fatalf("after crash restart: n=%d err=%v", n, err)
	}
}
