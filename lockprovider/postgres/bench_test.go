package postgres_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// benchPool is a pool of its own for benchmarks, large enough for 16
// concurrent workers, on a private schema.
func benchPool(b testing.TB) *pgxpool.Pool {
	b.Helper()
	pg := testenv.Postgres(b)
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 16
	cfg.MinConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// benchProvider is a migrated provider on a fresh benchPool.
func benchProvider(b testing.TB) (*postgres.Provider, *pgxpool.Pool) {
	b.Helper()
	pool := benchPool(b)
	p, err := postgres.New(pool, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return p, pool
}

// benchPair is baton and the raw baseline on one private schema.
func benchPair(b testing.TB) (*postgres.Provider, rawShedLock) {
	b.Helper()
	p, pool := benchProvider(b)
	if _, err := pool.Exec(context.Background(), rawSchema); err != nil {
		b.Fatal(err)
	}
	return p, rawShedLock{pool}
}

// drive runs op b.N times: on one name from one goroutine when conc is 1,
// otherwise with b.RunParallel at about conc goroutines, each on a name of
// its own (prefix plus a worker number).
func drive(b *testing.B, conc int, prefix string, op func(name string) error) {
	if conc == 1 {
		for b.Loop() {
			if err := op(prefix + "serial"); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var worker atomic.Int64
	b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		name := prefix + strconv.FormatInt(worker.Add(1), 10)
		for pb.Next() {
			if err := op(name); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// rawShedLock is the baseline: ShedLock's documented PostgreSQL table and
// statements in DB-time mode, issued with pgx (an upsert to acquire, an
// UPDATE to release), with no owner token, no fence and no notification.
type rawShedLock struct{ pool *pgxpool.Pool }

const (
	rawSchema = `CREATE TABLE IF NOT EXISTS shedlock (
	name varchar(64) NOT NULL PRIMARY KEY,
	lock_until timestamptz NOT NULL,
	locked_at timestamptz NOT NULL,
	locked_by varchar(255) NOT NULL)`
	rawAcquire = `INSERT INTO shedlock (name, lock_until, locked_at, locked_by)
	VALUES ($1, now() + $2::interval, now(), $3)
	ON CONFLICT (name) DO UPDATE SET lock_until = now() + $2::interval, locked_at = now(), locked_by = $3
	WHERE shedlock.lock_until <= now()`
	rawRelease = `UPDATE shedlock SET lock_until = now() WHERE name = $1 AND locked_by = $2`
)

func (r rawShedLock) acquireRelease(ctx context.Context, name, by string) error {
	tag, err := r.pool.Exec(ctx, rawAcquire, name, 30*time.Second, by)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return lockprovider.ErrNotAcquired
	}
	_, err = r.pool.Exec(ctx, rawRelease, name, by)
	return err
}

func batonAcquireRelease(ctx context.Context, p *postgres.Provider, name string) error {
	owner := lockprovider.NewOwner()
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: 30 * time.Second}); err != nil {
		return err
	}
	return p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
}

// BenchmarkAcquireRelease compares baton's acquire+release with the raw
// ShedLock-style baseline, serially and with 16 concurrent workers on
// distinct names. The target, with the figures, is in docs/benchmarks.md:
// baton >= 0.95x the baseline.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	p, raw := benchPair(b)
	impls := []struct {
		name string
		op   func(name string) error
	}{
		{"impl=raw-shedlock", func(name string) error { return raw.acquireRelease(ctx, name, "bench") }},
		{"impl=baton", func(name string) error { return batonAcquireRelease(ctx, p, name) }},
	}
	for _, conc := range []int{1, 16} {
		for _, impl := range impls {
			b.Run("conc="+strconv.Itoa(conc)+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				drive(b, conc, "bench-", impl.op)
			})
		}
	}
}

// BenchmarkAcquireReleasePaired runs baton and the raw baseline
// alternately in every iteration (each worker on its own names) and reports
// the mean time of each per acquire+release pair and their ratio
// (raw/baton: 1.0 means as fast as the baseline). On a shared, busy machine
// the load drifts between sequential sub-benchmarks; interleaving exposes
// both to the same load.
func BenchmarkAcquireReleasePaired(b *testing.B) {
	ctx := context.Background()
	p, raw := benchPair(b)
	for _, conc := range []int{1, 16} {
		b.Run("conc="+strconv.Itoa(conc), func(b *testing.B) {
			var rawNs, batonNs atomic.Int64
			drive(b, conc, "paired-", func(name string) error {
				start := time.Now()
				if err := raw.acquireRelease(ctx, name, "bench"); err != nil {
					return err
				}
				mid := time.Now()
				if err := batonAcquireRelease(ctx, p, name); err != nil {
					return err
				}
				rawNs.Add(int64(mid.Sub(start)))
				batonNs.Add(int64(time.Since(mid)))
				return nil
			})
			n := float64(b.N)
			b.ReportMetric(float64(rawNs.Load())/n, "raw-ns/pair")
			b.ReportMetric(float64(batonNs.Load())/n, "baton-ns/pair")
			if batonNs.Load() > 0 {
				b.ReportMetric(float64(rawNs.Load())/float64(batonNs.Load()), "raw/baton")
			}
		})
	}
}

// BenchmarkProvider is the shared provider benchmark (lockprovidertest.Bench).
func BenchmarkProvider(b *testing.B) {
	p, _ := benchProvider(b)
	lockprovidertest.Bench(b, p)
}

// BenchmarkHandoff is the shared hand-off benchmark
// (lockprovidertest.BenchHandoff): the waiter is woken by LISTEN/NOTIFY.
func BenchmarkHandoff(b *testing.B) {
	p, _ := benchProvider(b)
	lockprovidertest.BenchHandoff(b, p)
}
