package mysqlenv

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"testing"
	"time"
)

// Blocked waits until a transaction is waiting for a row lock held by the
// transaction of connection conn (its CONNECTION_ID()), so a test can order
// a statement behind another transaction without timing it. It fails the
// test if done delivers first: the call it awaits returned before it was
// blocked.
func Blocked(t testing.TB, ctx context.Context, db *sql.DB, conn int64, done <-chan error) {
	t.Helper()
	for {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS w"+
			" JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id WHERE b.trx_mysql_thread_id = ?", conn).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the call returned %v before it was blocked", err)
		// InnoDB refreshes these tables only when they have not been read
		// for 100 ms: a faster poll would read a stale copy forever, and
		// the jitter lets two polls on one server leave such a gap.
		case <-time.After(150*time.Millisecond + rand.N(150*time.Millisecond)):
		}
	}
}
