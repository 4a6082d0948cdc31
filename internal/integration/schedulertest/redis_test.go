package schedulertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

func init() {
	setups["redis"] = func(t *testing.T, _ *pgenv.PG, spec *instanceSpec) {
		spec.URL, spec.Prefix = testenv.RedisURL(t), testenv.Prefix(t)
	}
	providers["redis"] = func(ctx context.Context, spec instanceSpec, in *instance) (lockprovider.Provider, error) {
		opt, err := goredis.ParseURL(spec.URL)
		if err != nil {
			return nil, err
		}
		opt.PoolSize = 4
		opt.ContextTimeoutEnabled = true
		client := goredis.NewClient(opt)
		in.closers = append(in.closers, func() { _ = client.Close() })
		if err := client.Ping(ctx).Err(); err != nil {
			return nil, err
		}
		return redisprovider.New(client, &redisprovider.Config{Prefix: spec.Prefix})
	}
}

// BenchmarkClaimAtOneTick registers 1,000 locked jobs due at the same tick
// on Redis and measures, per tick, the time from the tick to the last
// successful claim (the last job start) across replicas. Each b.N
// iteration is one tick.
func BenchmarkClaimAtOneTick(b *testing.B) {
	for _, auto := range []bool{false, true} {
		for _, replicas := range []int{1, 3} {
			client := "client"
			if auto {
				client = "autopipeline"
			}
			b.Run(fmt.Sprintf("redis/%s/jobs=1000/replicas=%d", client, replicas), func(b *testing.B) {
				claimAtOneTick(b, 1000, replicas, auto)
			})
		}
	}
}

// BenchmarkClaimBaseline is the floor for BenchmarkClaimAtOneTick: 1,000
// goroutines started at once, each calling the Redis provider's Acquire
// and then Release directly, without the scheduler. Reports the time from
// the start to the last successful acquire.
func BenchmarkClaimBaseline(b *testing.B) {
	const jobs = 1000
	client := redisenv.Client(b)
	p, err := redisprovider.New(client, &redisprovider.Config{Prefix: testenv.Prefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var lats []time.Duration
	tick := time.Now().Truncate(time.Second)
	for i := range b.N + 1 {
		tick = tick.Add(time.Second)
		var mu sync.Mutex
		var last time.Duration
		var wg sync.WaitGroup
		t0 := time.Now()
		for j := range jobs {
			wg.Go(func() {
				owner := lockprovider.NewOwner()
				name := fmt.Sprintf("base-%04d", j)
				_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: time.Second, Tick: tick})
				if err != nil {
					b.Error(err)
					return
				}
				lat := time.Since(t0)
				mu.Lock()
				last = max(last, lat)
				mu.Unlock()
				_ = p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
			})
		}
		wg.Wait()
		if i > 0 { // the first round loads scripts and opens connections
			lats = append(lats, last)
		}
	}
	slices.Sort(lats)
	b.ReportMetric(float64(lats[len(lats)/2])/float64(time.Millisecond), "ms-to-last-claim(median)")
	b.ReportMetric(float64(lats[len(lats)-1])/float64(time.Millisecond), "ms-to-last-claim(max)")
	b.ReportMetric(0, "ns/op")
}

// claimAtOneTick measures the claims of jobs locked jobs due at one tick on
// replicas schedulers. With auto, each provider sends its commands through
// go-redis's autopipeliner (Client.AutoPipeline), which batches the
// concurrent acquires into pipelines.
func claimAtOneTick(b *testing.B, jobs, replicas int, auto bool) {
	const interval = time.Second
	prefix := testenv.Prefix(b)
	var mu sync.Mutex
	lastClaim := map[time.Time]time.Duration{}
	firstAttempt := map[time.Time]time.Duration{}
	claims := map[time.Time]int{}
	attempt := func(ev scheduler.Event) {
		lat := time.Since(ev.Tick)
		mu.Lock()
		defer mu.Unlock()
		if f, ok := firstAttempt[ev.Tick]; !ok || lat < f {
			firstAttempt[ev.Tick] = lat
		}
	}
	started := func(ev scheduler.Event) {
		lat := time.Since(ev.Tick)
		mu.Lock()
		defer mu.Unlock()
		claims[ev.Tick]++
		if lat > lastClaim[ev.Tick] {
			lastClaim[ev.Tick] = lat
		}
	}
	var scheds []*scheduler.Scheduler
	for range replicas {
		client := redisenv.Client(b)
		if err := client.Ping(context.Background()).Err(); err != nil {
			b.Fatal(err)
		}
		var rc redisprovider.Client = client
		if auto {
			ap, err := client.AutoPipeline()
			if err != nil {
				b.Fatal(err)
			}
			rc = ap
		}
		p, err := redisprovider.New(rc, &redisprovider.Config{Prefix: prefix})
		if err != nil {
			b.Fatal(err)
		}
		s, err := scheduler.New(p, &scheduler.Config{Observer: scheduler.Hooks{Attempt: attempt, Started: started}})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for i := range jobs {
			_, err := s.Every(interval).Locked(fmt.Sprintf("claim-%04d", i), scheduler.AtMostFor(interval/2)).
				Do(func(context.Context, scheduler.Run) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
		}
		scheds = append(scheds, s)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
	}
	// Skip the first tick (connection set-up, script loading).
	first := time.Now().Truncate(interval).Add(2 * interval)
	time.Sleep(time.Until(first))
	b.ResetTimer()
	time.Sleep(time.Duration(b.N)*interval + interval/2)
	b.StopTimer()
	for _, s := range scheds {
		_ = s.Shutdown(context.Background())
	}
	var lats, wakes []time.Duration
	var incomplete int
	for tick, lat := range lastClaim {
		if tick.Before(first) {
			continue
		}
		if claims[tick] != jobs {
			// On an overloaded machine a run may outlast the interval; its
			// next tick is then skipped (ErrStillRunning).
			b.Logf("tick %v: %d claims, want %d", tick, claims[tick], jobs)
			incomplete++
		}
		lats = append(lats, lat)
		wakes = append(wakes, firstAttempt[tick])
	}
	if len(lats) == 0 {
		b.Fatal("no tick measured")
	}
	slices.Sort(lats)
	b.ReportMetric(float64(lats[len(lats)/2])/float64(time.Millisecond), "ms-to-last-claim(median)")
	b.ReportMetric(float64(lats[len(lats)-1])/float64(time.Millisecond), "ms-to-last-claim(max)")
	slices.Sort(wakes)
	b.ReportMetric(float64(wakes[len(wakes)/2])/float64(time.Millisecond), "ms-to-first-attempt(median)")
	b.ReportMetric(float64(incomplete), "incomplete-ticks")
	b.ReportMetric(0, "ns/op")
}
