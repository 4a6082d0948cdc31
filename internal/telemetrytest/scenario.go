// Package telemetrytest runs one scenario that exercises every telemetry
// event on a real backend, for the tests of the adapter modules
// (contrib/otel, contrib/prometheus): three scheduler instances share a
// tick of four locked jobs (one succeeds, one fails, one panics, one loses
// its lock), a Locker takes and releases a lock and is refused it once,
// and a rate limiter allows two requests and denies a third.
package telemetrytest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/observe"
	"github.com/baton-go/baton/ratelimit"
	"github.com/baton-go/baton/scheduler"
)

// Instances is the number of scheduler instances of the scenario.
const Instances = 3

// The scenario's names.
const (
	JobOK    = "telemetry-ok"
	JobFail  = "telemetry-fail"
	JobPanic = "telemetry-panic"
	JobLost  = "telemetry-lost"
	Lock     = "telemetry-lock"
	Policy   = "telemetry-policy"
)

// Jobs maps each job of the scenario to the outcome of its run.
var Jobs = map[string]string{
	JobOK:    observe.OutcomeSucceeded,
	JobFail:  observe.OutcomeFailed,
	JobPanic: observe.OutcomePanicked,
	JobLost:  observe.OutcomeLockLost,
}

// LostAtMostFor is the lease of JobLost, which waits for its context to
// end: its run lasts about this long.
const LostAtMostFor = 400 * time.Millisecond

// Backends are the backends the scenario runs on.
var Backends = []string{"redis", "postgres"}

// Result says what the scenario did.
type Result struct {
	Tick   time.Time        // the one tick of every job
	Winner map[string]int   // job -> index of the instance that ran it
	Token  map[string]int64 // job -> the fencing token of its run
}

// Run runs the scenario on backend ("redis" or "postgres", isolated by a
// key prefix or schema of its own), with obs(i) as the observer of
// scheduler instance i and obs(0) as that of the Locker and the limiter.
// Each job function calls work with its context first. Run returns after
// every instance has finished the tick and shut down.
func Run(t *testing.T, backend string, obs func(i int) observe.Observer, work func(ctx context.Context, job string)) Result {
	t.Helper()
	newProvider := providers(t, backend)
	res := Result{Winner: map[string]int{}, Token: map[string]int64{}}
	var mu sync.Mutex
	var done, lost atomic.Int64
	allDone := make(chan struct{})
	jobs := map[string]scheduler.Func{
		JobOK: func(ctx context.Context, run scheduler.Run) error { work(ctx, run.Job); return nil },
		JobFail: func(ctx context.Context, run scheduler.Run) error {
			work(ctx, run.Job)
			return errors.New("failed on purpose")
		},
		JobPanic: func(ctx context.Context, run scheduler.Run) error {
			work(ctx, run.Job)
			panic("panicked on purpose")
		},
		JobLost: func(ctx context.Context, run scheduler.Run) error {
			work(ctx, run.Job)
			<-ctx.Done() // the lease's trust window ends under the job
			return context.Cause(ctx)
		},
	}

	provs := make([]lockprovider.Provider, Instances+1) // the last for the Locker and limiter
	for i := range provs {
		provs[i] = newProvider(t)
	}
	// One tick for every job, soon: an hourly schedule offset to fire
	// in a moment, the same instant on every instance.
	res.Tick = time.Now().Add(time.Second).Truncate(time.Millisecond)
	offset := time.Duration(res.Tick.UnixNano() % int64(time.Hour))

	var scheds []*scheduler.Scheduler
	for i := range Instances {
		counted := observe.Func(func(_ context.Context, e observe.Event) {
			switch e.Kind {
			case observe.JobStarted:
				mu.Lock()
				res.Winner[e.Job], res.Token[e.Job] = i, e.Token
				mu.Unlock()
			case observe.JobLockLost:
				lost.Add(1)
			case observe.JobDone:
				if done.Add(1) == int64(len(jobs)*Instances) {
					close(allDone)
				}
			}
		})
		s, err := scheduler.New(provs[i], &scheduler.Config{
			Observer: observe.Join(obs(i), counted), LockedBy: "instance-" + string(rune('a'+i)), DisableRegistry: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, fn := range jobs {
			d := 10 * time.Second
			if name == JobLost {
				d = LostAtMostFor
			}
			if _, err := s.Every(time.Hour, scheduler.Offset(offset)).Locked(name, scheduler.AtMostFor(d)).Do(fn); err != nil {
				t.Fatal(err)
			}
		}
		scheds = append(scheds, s)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if time.Now().After(res.Tick) {
		t.Fatalf("the schedulers started after the tick %v: the machine is too slow for the scenario", res.Tick)
	}

	// Meanwhile, a Locker and a limiter on the same backend.
	ctx := context.Background()
	p := provs[Instances]
	locker, err := baton.NewLocker(p, &baton.Config{Observer: obs(0)})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := locker.TryAcquire(ctx, Lock, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locker.TryAcquire(ctx, Lock, nil); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("second TryAcquire of a held lock: %v", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lim, err := ratelimit.New(p.(lockprovider.RateLimiter), []ratelimit.Limit{{Algorithm: ratelimit.GCRA, Rate: 2, Period: time.Minute, Burst: 2, Name: Policy}},
		&ratelimit.Config{Observer: obs(0)})
	if err != nil {
		t.Fatal(err)
	}
	key := "user-" + testenv.Unique() // one key thrice: two pass, the third is denied
	for range 3 {
		if _, err := lim.Allow(ctx, key); err != nil {
			t.Fatal(err)
		}
	}

	select {
	case <-allDone:
	case <-time.After(15 * time.Second):
		t.Fatalf("the tick did not finish on every instance within 15s (%d of %d)", done.Load(), len(jobs)*Instances)
	}
	// A loss is reported just after the run's context is cancelled, so
	// possibly after the tick's end.
	for deadline := time.Now().Add(5 * time.Second); lost.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lock-losing job's loss was not reported within 5s")
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, s := range scheds {
		if err := s.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(res.Winner) != len(jobs) {
		t.Fatalf("runs of %v, want one of each job", res.Winner)
	}
	return res
}

// providers returns a function that makes providers on backend, all
// sharing one key prefix or schema.
func providers(t *testing.T, backend string) func(t *testing.T) lockprovider.Provider {
	switch backend {
	case "redis":
		client, prefix := redisenv.Client(t), testenv.Prefix(t)
		return func(t *testing.T) lockprovider.Provider {
			p, err := redis.New(client, &redis.Config{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	case "postgres":
		pg := pgenv.Schema(t)
		var once sync.Once
		return func(t *testing.T) lockprovider.Provider {
			p, err := postgres.New(pg.Pool, &postgres.Config{Schema: pg.Schema})
			if err != nil {
				t.Fatal(err)
			}
			once.Do(func() {
				if err := p.Migrate(context.Background()); err != nil {
					t.Fatal(err)
				}
			})
			return p
		}
	}
	t.Fatalf("unknown backend %q", backend)
	return nil
}
