// Package mysqlenv gives tests database/sql handles, through
// go-sql-driver/mysql, on the MySQL or MariaDB servers testenv provides. It
// is apart from testenv so that only the tests that use MySQL link the
// driver.
package mysqlenv

import (
	"context"
	"database/sql"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/internal/testenv"
)

// MY is a database of its own on the shared server.
type MY struct {
	DB       *sql.DB
	Database string
	DSN      string // connects to Database
}

// Database creates a database for this test on the shared server
// (testenv.MySQLDSN), returns a handle whose connections use it, and drops
// it when the test ends. The handle interpolates parameters client-side
// (interpolateParams), so each statement is one round trip.
func Database(t testing.TB) *MY {
	t.Helper()
	base := testenv.MySQLDSN(t)
	name := "t_" + testenv.Unique()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := Open(t, base)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("mysqlenv: create database: %v", err)
	}
	dsn := WithDatabase(t, base, name)
	db := Open(t, dsn)
	t.Cleanup(func() {
		_ = db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name); err != nil {
			t.Errorf("mysqlenv: drop database %s: %v", name, err)
		}
	})
	return &MY{DB: db, Database: name, DSN: dsn}
}

// Open returns a handle on dsn with interpolateParams set, closed when the
// test ends.
func Open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("mysqlenv: DSN %q: %v", dsn, err)
	}
	cfg.InterpolateParams = true
	c, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("mysqlenv: %v", err)
	}
	db := sql.OpenDB(c)
	db.SetMaxIdleConns(16)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// WithDatabase returns dsn with its database set to name.
func WithDatabase(t testing.TB, dsn, name string) string {
	t.Helper()
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("mysqlenv: DSN %q: %v", dsn, err)
	}
	cfg.DBName = name
	return cfg.FormatDSN()
}
