package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

<<<<<<< HEAD
// concurrency is the number of goroutines of the parallel benchmarks.
const concurrency = 16

// The peer and the ceiling run against the same server in the same binary,
// so ratios within one run compare like with like. Each goroutine locks a
// name of its own: this measures the cost of a grant, not contention.
//
//	go test -run '^$' -bench 'AcquireRelease|LockCompare' -cpu 2 -count 3 ./lockprovider/redis/
func BenchmarkAcquireRelease(b *testing.B) {
	c := testenv.Redis(b)
	for _, mode := range []string{"serial", "parallel16"} {
		for _, impl := range lockImpls(b, c) {
			b.Run(mode+"/"+impl.name, func(b *testing.B) { run(b, mode, impl.op) })
		}
	}
}

// BenchmarkLockCompare interleaves the three implementations in rounds
// (rotating their order), so a machine whose load changes during the run
// affects all three alike, and reports each one's ns/op and baton's
// throughput ratios: x_redislock = redislock ns/op ÷ baton ns/op (target
// ≥ 1.1), x_raw = raw ns/op ÷ baton ns/op (target ≥ 0.95); the figures are
// in docs/benchmarks.md.
func BenchmarkLockCompare(b *testing.B) {
	c := testenv.Redis(b)
	for _, workers := range []int{1, concurrency} {
		b.Run("workers"+strconv.Itoa(workers), func(b *testing.B) {
			impls := lockImpls(b, c)
			spent := make([]time.Duration, len(impls))
			const rounds = 12
			per := max(b.N/rounds, 1)
			b.ResetTimer()
			for r := range rounds {
				for i := range impls {
					k := (i + r) % len(impls)
					spent[k] += drive(b, workers, per, impls[k].op)
				}
			}
			ns := func(i int) float64 { return float64(spent[i].Nanoseconds()) / float64(per*rounds) }
			for i, impl := range impls {
				b.ReportMetric(ns(i), impl.name+"_ns/op")
			}
			b.ReportMetric(ns(1)/ns(0), "x_redislock")
			b.ReportMetric(ns(2)/ns(0), "x_raw")
			b.ReportMetric(0, "ns/op") // the per-implementation figures above are the result
		})
	}
}

// drive runs n operations on workers goroutines, each on a name of its
// own, and returns the wall time.
func drive(b *testing.B, workers, n int, op func(name string) error) time.Duration {
	var (
		left atomic.Int64
		wg   sync.WaitGroup
	)
	left.Store(int64(n))
	start := time.Now()
	for w := range workers {
		name := "cmp-" + strconv.Itoa(w)
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := op(name); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

type lockImpl struct {
	name string
	op   func(name string) error
}

// lockImpls are baton, bsm/redislock and the raw go-redis ceiling (SET NX
// PX, then an EVALSHA compare-and-delete), each with a key prefix of its
// own. baton and raw draw a fresh owner token per acquisition, as callers
// do; redislock draws its own.
func lockImpls(b *testing.B, c *goredis.Client) []lockImpl {
	ctx := b.Context()
	p, _ := newProvider(b, c)
	rl := redislock.New(c)
	rlPrefix, rawPrefix := testenv.Prefix(b), testenv.Prefix(b)
	del := goredis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)
	return []lockImpl{
		{"baton", func(name string) error {
			owner := lockprovider.NewOwner()
			ap := lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: 10 * time.Second}
			if _, err := p.Acquire(ctx, ap); err != nil {
				return err
			}
			return p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
		}},
		{"redislock", func(name string) error {
			lock, err := rl.Obtain(ctx, rlPrefix+name, 10*time.Second, nil)
			if err != nil {
				return err
			}
			return lock.Release(ctx)
		}},
		{"raw", func(name string) error {
			owner := lockprovider.NewOwner()
			key := rawPrefix + name
			if err := c.SetArgs(ctx, key, owner, goredis.SetArgs{Mode: "NX", TTL: 10 * time.Second}).Err(); err != nil {
				return err
			}
			return del.Run(ctx, c, []string{key}, owner).Err()
		}},
	}
}

func run(b *testing.B, mode string, op func(name string) error) {
	b.ReportAllocs()
	if mode == "serial" {
		for b.Loop() {
			if err := op("bench"); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var seq atomic.Int64
	b.SetParallelism((concurrency + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		name := "bench-" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			if err := op(name); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
=======
// The comparisons with other Redis lock libraries live in the bench module
// (bench/cmd/benchrun), so that they stay out of this module's
// dependencies.
>>>>>>> origin/main

// BenchmarkProvider is the shared provider benchmark (lockprovidertest.Bench).
func BenchmarkProvider(b *testing.B) {
	p, _ := newProvider(b, testenv.Redis(b))
	lockprovidertest.Bench(b, p)
}

// BenchmarkHandoff is the shared hand-off benchmark
// (lockprovidertest.BenchHandoff): the waiter is woken by sharded pub/sub.
func BenchmarkHandoff(b *testing.B) {
	p, _ := newProvider(b, testenv.Redis(b))
	lockprovidertest.BenchHandoff(b, p)
}
