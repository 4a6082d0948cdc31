package mysql_test

import (
	"context"
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
