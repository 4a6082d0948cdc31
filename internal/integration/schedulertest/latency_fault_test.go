package schedulertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

// Behind a slow network (every chunk delayed 200 ms each way, a round trip
// of about 400 ms), a job every 2 s runs every tick once, although each
// run returns only 300 ms before the next tick (a slow claim and a short
// body, or a longer body): the release still on the wire when the next
// tick comes must not make that tick skip as still running on the replica
// that ran the previous one, nor leave the lock held for the others.
func TestFaultLatencyEveryTick(t *testing.T) {
	const (
		delay    = 200 * time.Millisecond
		interval = 2 * time.Second
		ticks    = 5
		replicas = 2
	)
	backends := map[string]func(t *testing.T, proxied, prefix string) lockprovider.Provider{
		"redis": func(t *testing.T, proxied, prefix string) lockprovider.Provider {
			opt, err := goredis.ParseURL(proxied)
			if err != nil {
				t.Fatal(err)
			}
			opt.ContextTimeoutEnabled = true
			c := goredis.NewClient(opt)
			t.Cleanup(func() { _ = c.Close() })
			p, err := redisprovider.New(c, &redisprovider.Config{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		"postgres": func(t *testing.T, proxied, _ string) lockprovider.Provider {
			pool, err := pgxpool.New(context.Background(), proxied)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			p, err := pgprovider.New(pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	}
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var url string
			if backend == "redis" {
				url = testenv.RedisURL(t)
			} else {
				pg := pgenv.Schema(t)
				url = pg.URL
				p, err := pgprovider.New(pg.Pool, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var (
				mu   sync.Mutex
				runs = map[time.Time][]string{}
				lags []time.Duration // from the tick to the run's start
			)
			proxy, proxied := testenv.ProxyURL(t, url)
			prefix := "lat-" + testenv.Unique() // one keyspace for the replicas
			for i := range replicas {
				name := fmt.Sprintf("%s-%d", backend, i)
				rec := &recorder{}
				s := newSched(t, backends[backend](t, proxied, prefix), &scheduler.Config{LockedBy: name, Observer: rec.hooks()})
				must(s.Every(interval).Locked("slow-net", scheduler.AtMostFor(3*interval)).Do(func(ctx context.Context, run scheduler.Run) error {
					mu.Lock()
					runs[run.Tick] = append(runs[run.Tick], name)
					lags = append(lags, time.Since(run.Tick))
					t.Logf("%s ran tick %s, started %v after it", name, run.Tick.Format(time.StampMilli), time.Since(run.Tick).Round(time.Millisecond))
					mu.Unlock()
					// Return 300 ms before the next tick: the release
					// lands on the server after the others' claims for
					// it would, unless they wait for it.
					time.Sleep(time.Until(run.Tick.Add(interval - 300*time.Millisecond)))
					return nil
				}))
				t.Cleanup(func() {
					for _, ev := range rec.get("skipped") {
						t.Logf("%s skipped tick %s: %v", name, ev.Tick.Format(time.StampMilli), ev.Err)
					}
				})
				start(t, s)
			}
			// The delay starts now, on warm connections; the window
			// starts a tick later and ends a tick before the schedulers
			// stop.
			proxy.SetDelay(delay)
			first := time.Now().Truncate(interval).Add(2 * interval)
			last := first.Add((ticks - 1) * interval)
			time.Sleep(time.Until(last.Add(interval)))

			mu.Lock()
			defer mu.Unlock()
			var missing, twice []string
			for tk := first; !tk.After(last); tk = tk.Add(interval) {
				switch n := len(runs[tk]); {
				case n == 0:
					missing = append(missing, tk.Format(time.StampMilli))
				case n > 1:
					twice = append(twice, tk.Format(time.StampMilli))
				}
			}
			slices.Sort(lags)
			t.Logf("%s behind a %v delay each way: %d ticks, runs started %v to %v after their tick (median %v)",
				backend, delay, ticks, lags[0].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond), lags[len(lags)/2].Round(time.Millisecond))
			if len(missing) > 0 {
				t.Errorf("ticks that no replica ran: %v", missing)
			}
			if len(twice) > 0 {
				t.Errorf("ticks that ran twice: %v", twice)
			}
		})
	}
}
