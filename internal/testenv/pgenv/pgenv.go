// Package pgenv gives tests pgx pools on the PostgreSQL servers testenv
// provides. It is apart from testenv so that only the tests that use
// PostgreSQL link pgx.
package pgenv

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv"
)

// PG is a schema of its own on the shared PostgreSQL.
type PG struct {
	Pool   *pgxpool.Pool // search_path is Schema
	Schema string
	URL    string // connects with search_path set to Schema
}

// Schema creates a schema for this test on the shared PostgreSQL
// (testenv.PostgresURL), returns a pool whose search_path is that schema,
// and drops the schema when the test ends.
func Schema(t testing.TB) *PG {
	t.Helper()
	base := testenv.PostgresURL(t)
	schema := "t_" + testenv.Unique()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatalf("pgenv: connect %s: %v", base, err)
	}
	defer admin.Close()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgenv: create schema: %v", err)
	}
	u := WithSearchPath(base, schema)
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatalf("pgenv: connect: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgxpool.New(ctx, base)
		if err != nil {
			t.Errorf("pgenv: drop schema %s: %v", schema, err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgenv: drop schema %s: %v", schema, err)
		}
	})
	return &PG{Pool: pool, Schema: schema, URL: u}
}

// Pool returns a pool on dsn (a private server's URL, say), closed when
// the test ends.
func Pool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgenv: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// WithSearchPath returns dsn with search_path set to schema for every
// connection made from it.
func WithSearchPath(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn + " search_path=" + schema
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
