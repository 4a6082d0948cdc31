package redlock_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/redlock"
	"github.com/baton-go/baton/scheduler"
)

func acquire(t testing.TB, p lockprovider.Provider, name, owner string, atMostFor time.Duration) (batontype.Lease, error) {
	t.Helper()
	return p.Acquire(t.Context(), lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: atMostFor})
}

// With two of five masters down, the other three are a majority: grants,
// extensions and releases work.
func TestTwoOfFiveDown(t *testing.T) {
	servers, clients := masters(t, 5)
	p := newProvider(t, clients, redlock.Config{})
	servers[1].Kill()
	servers[3].Kill()
	owner := lockprovider.NewOwner()
	l, err := acquire(t, p, "n", owner, time.Minute)
	if err != nil {
		t.Fatalf("Acquire with 3 of 5 masters: %v", err)
	}
	if _, err := acquire(t, p, "n", lockprovider.NewOwner(), time.Minute); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("second owner: %v, want ErrNotAcquired", err)
	}
	if _, err := p.Extend(t.Context(), lockprovider.ExtendParams{Name: "n", Owner: owner, AtMostFor: time.Minute}); err != nil {
		t.Errorf("Extend: %v", err)
	}
	if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: "n", Owner: owner}); err != nil {
		t.Errorf("Release: %v", err)
	}
	l2, err := acquire(t, p, "n", lockprovider.NewOwner(), time.Minute)
	if err != nil || l2.Token <= l.Token {
		t.Errorf("next grant: %+v, %v; want a token above %d", l2, err, l.Token)
	}
}

// With three of five masters down no majority can be had: Acquire reports
// unavailability, never "held by another owner".
func TestThreeOfFiveDown(t *testing.T) {
	servers, clients := masters(t, 5)
	p := newProvider(t, clients, redlock.Config{})
	for _, i := range []int{0, 2, 4} {
		servers[i].Kill()
	}
	_, err := acquire(t, p, "n", lockprovider.NewOwner(), time.Minute)
	if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire with 2 of 5 masters: %v, want ErrUnavailable and not ErrNotAcquired", err)
	}
	if !batontype.Definite(err) {
		t.Errorf("Acquire against refused connections: %v, want a definite (not sent) error", err)
	}
	t.Logf("Acquire with 2 of 5: %v", err)
}

// Workers take turns on one name while masters are restarted one at a time
// without persistence (they come back empty): no two workers hold the name
// at once, and every grant's token is larger than the one before.
func TestRestartWithoutPersistence(t *testing.T) {
	servers, clients := masters(t, 5)
	prefix := "restart:"
	var (
		inside   atomic.Int32
		overlaps atomic.Int32
		mu       sync.Mutex
		last     int64
		grants   int
	)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 4 {
		p, err := redlock.New(clients, &redlock.Config{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				owner := lockprovider.NewOwner()
				l, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "n", Owner: owner, AtMostFor: time.Second})
				if err != nil {
					time.Sleep(time.Millisecond)
					continue
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				mu.Lock()
				if l.Token <= last {
					t.Errorf("token %d after %d", l.Token, last)
				}
				last = l.Token
				grants++
				mu.Unlock()
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				_ = p.Release(context.WithoutCancel(ctx), lockprovider.ReleaseParams{Name: "n", Owner: owner})
			}
		})
	}
	for i := range 6 {
		time.Sleep(400 * time.Millisecond)
		if err := servers[i%len(servers)].Restart(); err != nil {
			t.Errorf("restart master %d: %v", i%len(servers), err)
		}
	}
	time.Sleep(400 * time.Millisecond)
	cancel()
	wg.Wait()
	t.Logf("%d grants across 6 restarts; last token %d", grants, last)
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d overlapping holders", n)
	}
	if grants < 10 {
		t.Errorf("only %d grants", grants)
	}
}

// A holder that stalls past its lease (a pause, a long GC) and then writes
// with its old token is rejected by the fenced resource once the next
// holder has written with its token.
func TestPausedHolderIsFenced(t *testing.T) {
	_, clients := masters(t, 5)
	p := newProvider(t, clients, redlock.Config{})
	var res fence.Resource
	a, err := acquire(t, p, "n", lockprovider.NewOwner(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Do(a.Token, nil); err != nil {
		t.Fatalf("first holder's write: %v", err)
	}
	time.Sleep(time.Until(a.Until.Add(50 * time.Millisecond))) // the pause
	// The masters' keys expire AtMostFor after each received the claim,
	// which on a loaded machine can be later than the holder's trust
	// window: retry the takeover until they have (AtMostFor and a clock
	// drift allowance at the most, and far less in practice).
	var b batontype.Lease
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err = acquire(t, p, "n", lockprovider.NewOwner(), time.Minute)
		if err == nil {
			break
		}
		if !errors.Is(err, batontype.ErrNotAcquired) || time.Now().After(deadline) {
			t.Fatalf("takeover after the lease lapsed: %v", err)
		}
	}
	if b.Token <= a.Token {
		t.Fatalf("takeover token %d, want > %d", b.Token, a.Token)
	}
	if err := res.Do(b.Token, nil); err != nil {
		t.Fatalf("second holder's write: %v", err)
	}
	if err := res.Do(a.Token, nil); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("paused holder's late write: %v, want ErrStaleToken", err)
	}
}

// Three scheduler instances, each with clients of its own, run a locked job
// every 300 ms over five masters while one master is restarted without
// persistence: every tick runs at most once and tokens increase with the
// ticks.
func TestSchedulerExactlyOnce(t *testing.T) {
	servers, _ := masters(t, 5)
	const every = 300 * time.Millisecond
	var (
		mu     sync.Mutex
		runs   = map[time.Time]int64{}
		dups   []time.Time
		active atomic.Int32
		over   atomic.Int32
	)
	job := func(ctx context.Context, run scheduler.Run) error {
		if active.Add(1) != 1 {
			over.Add(1)
		}
		defer active.Add(-1)
		mu.Lock()
		if _, dup := runs[run.Tick]; dup {
			dups = append(dups, run.Tick)
		}
		runs[run.Tick] = run.Token
		mu.Unlock()
		time.Sleep(time.Duration(10+rand.IntN(20)) * time.Millisecond)
		return nil
	}
	var scheds []*scheduler.Scheduler
	for range 3 {
		own := make([]*goredis.Client, len(servers))
		for i, s := range servers {
			own[i] = client(t, s)
		}
		p, err := redlock.New(own, &redlock.Config{Prefix: "sched:"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := scheduler.New(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Every(every).Locked("job", scheduler.AtMostFor(2*time.Second)).Do(job); err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * every)
	if err := servers[2].Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * every)
	for _, s := range scheds {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dups) > 0 {
		t.Errorf("ticks run twice: %v", dups)
	}
	if n := over.Load(); n > 0 {
		t.Errorf("%d runs overlapped", n)
	}
	ticks := make([]time.Time, 0, len(runs))
	for tick := range runs {
		ticks = append(ticks, tick)
	}
	slices.SortFunc(ticks, time.Time.Compare)
	var lastToken int64
	for _, tick := range ticks {
		if runs[tick] <= lastToken {
			t.Errorf("tick %v ran with token %d, not above %d", tick, runs[tick], lastToken)
		}
		lastToken = runs[tick]
	}
	if len(runs) < 15 {
		t.Errorf("%d of about 20 ticks ran, want at least 15", len(runs))
	}
	t.Logf("%d of about 20 ticks ran, each once", len(runs))
}

// Masters behind proxies: with two of five partitioned away (requests get
// no answer) grants continue, each round waiting Config.Timeout for the
// silent ones; with three, Acquire reports unavailability of unknown
// outcome; once the partition heals, grants resume with larger tokens.
func TestPartition(t *testing.T) {
	servers, _ := masters(t, 5)
	proxies := make([]*testenv.Proxy, len(servers))
	clients := make([]*goredis.Client, len(servers))
	for i, s := range servers {
		proxies[i] = testenv.NewProxy(t, s.Addr())
		clients[i] = goredis.NewClient(&goredis.Options{Addr: proxies[i].Addr(), DialerRetries: 1, MaxRetries: -1, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = clients[i].Close() })
	}
	p := newProvider(t, clients, redlock.Config{Timeout: 300 * time.Millisecond})
	before, err := acquire(t, p, "n", lockprovider.NewOwner(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: "n", Owner: before.Owner}); err != nil {
		t.Fatal(err)
	}

	proxies[0].SetMode(testenv.Blackhole)
	proxies[3].SetMode(testenv.Blackhole)
	owner := lockprovider.NewOwner()
	minority, err := acquire(t, p, "n", owner, time.Minute)
	if err != nil {
		t.Fatalf("Acquire with 2 of 5 partitioned: %v", err)
	}
	if minority.Token <= before.Token {
		t.Errorf("token %d, want > %d", minority.Token, before.Token)
	}
	if _, err := acquire(t, p, "n", lockprovider.NewOwner(), time.Minute); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("second owner with 2 of 5 partitioned: %v, want ErrNotAcquired", err)
	}
	if err := p.Release(t.Context(), lockprovider.ReleaseParams{Name: "n", Owner: owner}); err != nil {
		t.Errorf("Release with 2 of 5 partitioned: %v", err)
	}

	proxies[4].SetMode(testenv.Blackhole)
	_, err = acquire(t, p, "n", lockprovider.NewOwner(), 2*time.Second)
	if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) || batontype.Definite(err) {
		t.Errorf("Acquire with 3 of 5 partitioned: %v, want ErrUnavailable of unknown outcome", err)
	}

	for _, px := range proxies {
		px.SetMode(testenv.Pass)
	}
	// Requests of the abandoned acquire that the partition held back are
	// delivered now, after its release, so they may hold masters until
	// that 2 s lease ends.
	var after batontype.Lease
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if after, err = acquire(t, p, "n", lockprovider.NewOwner(), time.Minute); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Acquire after the partition healed: %v", err)
		}
	}
	if after.Token <= minority.Token {
		t.Errorf("token after healing %d, want > %d", after.Token, minority.Token)
	}
}
