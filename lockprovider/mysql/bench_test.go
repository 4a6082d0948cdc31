package mysql_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// benchProvider is a migrated provider on a handle of its own, with idle
// connections for 16 concurrent workers, on a private database.
func benchProvider(b testing.TB, cfg *mysql.Config) *mysql.Provider {
	b.Helper()
	my := mysqlenv.Database(b)
	db := mysqlenv.Open(b, my.DSN)
	db.SetMaxIdleConns(16)
	p, err := mysql.New(db, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkProvider is the shared provider benchmark (lockprovidertest.Bench).
func BenchmarkProvider(b *testing.B) {
	lockprovidertest.Bench(b, benchProvider(b, nil))
}

// BenchmarkHandoff is the shared hand-off benchmark
// (lockprovidertest.BenchHandoff) at the default PollInterval and at 5ms.
// The waiter is woken by the poller; the benchmark releases right after
// the previous wake-up, in step with the poller, so each hand-off waits
// about a whole interval (a release at a random moment waits half of one
// on average).
func BenchmarkHandoff(b *testing.B) {
	for _, poll := range []time.Duration{mysql.DefaultPollInterval, 5 * time.Millisecond} {
		b.Run("poll="+poll.String(), func(b *testing.B) {
			lockprovidertest.BenchHandoff(b, benchProvider(b, &mysql.Config{PollInterval: poll}))
		})
	}
}

// rawShedLock is a ShedLock-style lock on ShedLock's MySQL table, in DB
// time, with the same driver: one INSERT … ON DUPLICATE KEY UPDATE to
// acquire (lock_until assigned last, so the condition reads its old value),
// one UPDATE to release; no owner token, no fence, no tick, no
// notification. The comparison for the provider's budget (≥ 0.95×).
const (
	rawShedLockTable = `CREATE TABLE IF NOT EXISTS shedlock (
	name VARCHAR(64) NOT NULL PRIMARY KEY,
	lock_until TIMESTAMP(3) NOT NULL,
	locked_at TIMESTAMP(3) NOT NULL,
	locked_by VARCHAR(255) NOT NULL)`
	rawShedLockAcquire = `INSERT INTO shedlock (name, lock_until, locked_at, locked_by)
	VALUES (?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(3), ?)
	ON DUPLICATE KEY UPDATE
	locked_by = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(locked_by), locked_by),
	locked_at = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(locked_at), locked_at),
	lock_until = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(lock_until), lock_until)`
	rawShedLockRelease = `UPDATE shedlock SET lock_until = UTC_TIMESTAMP(3) WHERE name = ? AND locked_by = ?`
)

// BenchmarkRawShedLock is rawShedLock's cycle, serial and at 16
// goroutines as lockprovidertest.Bench, for the ratio against
// BenchmarkProvider.
func BenchmarkRawShedLock(b *testing.B) {
	my := mysqlenv.Database(b)
	db := mysqlenv.Open(b, my.DSN)
	db.SetMaxIdleConns(16)
	if _, err := db.ExecContext(b.Context(), rawShedLockTable); err != nil {
		b.Fatal(err)
	}
	cycle := func(ctx context.Context, name string) error {
		res, err := db.ExecContext(ctx, rawShedLockAcquire, name, time.Minute.Microseconds(), "bench")
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errors.New("not acquired")
		}
		_, err = db.ExecContext(ctx, rawShedLockRelease, name, "bench")
		return err
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if err := cycle(b.Context(), "serial"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var seq atomic.Int64
		b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			name := "parallel-" + strconv.FormatInt(seq.Add(1), 10)
			for pb.Next() {
				if err := cycle(b.Context(), name); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
