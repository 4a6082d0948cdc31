package pgenv

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Blocked waits until a session is waiting for a lock held by the backend
// pid, so a test can order a statement behind another transaction without
// timing it. It fails the test if done delivers first: the call it awaits
// returned before it was blocked.
func Blocked(t testing.TB, ctx context.Context, pool *pgxpool.Pool, pid int, done <-chan error) {
	t.Helper()
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the call returned %v before it was blocked", err)
		case <-time.After(5 * time.Millisecond): // polling the server's lock table
		}
	}
}
