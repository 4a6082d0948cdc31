package pgfencetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
)

// witnessDuration is how long the lost-update witness runs: 20 s by default
// (long enough for hundreds of pauses and takeovers; both backends run in
// parallel), 2 minutes with BATON_SOAK=1.
func witnessDuration() time.Duration {
	if os.Getenv("BATON_SOAK") != "" {
		return 2 * time.Minute
	}
	return 20 * time.Second
}

const witnessTTL = 200 * time.Millisecond

// The lost-update witness: 8 workers, 2 of them child processes stopped
// with SIGSTOP at random moments for longer than the TTL, increment one
// counter row by read-modify-write (Mark, SELECT, a pause of up to 2×TTL,
// guarded UPDATE n = read + 1) under one lock. Leases routinely expire in
// the middle of a critical section. Every increment the guard acknowledged
// must be in the final counter, and no other: counter == acknowledged.
func TestLostUpdateWitness(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend+"-tokens", func(t *testing.T) {
			t.Parallel()
			testWitness(t, backend)
		})
	}
}

type tally struct{ acked, stale, lostBefore int64 }

func (a *tally) add(b tally) {
	a.acked += b.acked
	a.stale += b.stale
	a.lostBefore += b.lostBefore
}

func testWitness(t *testing.T, backendName string) {
	const inProcess, children = 6, 2
	ctx := context.Background()
	pg := pgenv.Schema(t)
	spec := helperSpec{Role: "witness", Backend: backendName, Prefix: testenv.Prefix(t), RedisURL: testenv.RedisURL(t), PGURL: pg.URL,
		Lock: "counter:1", AtMostFor: witnessTTL}
	b := openBackend(t, spec)
	migrate(t, b)
	if _, err := b.pool.Exec(ctx, `CREATE TABLE counter (id int PRIMARY KEY, n bigint NOT NULL, last_fence bigint)`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO counter VALUES (1, 0, NULL)`); err != nil {
		t.Fatal(err)
	}

	kids := make([]*child, children)
	for i := range kids {
		kids[i] = startChild(t, spec)
	}
	for _, k := range kids {
		k.expect("ready", 60*time.Second)
	}
	dur := witnessDuration()
	stop := make(chan struct{})
	var (
		mu     sync.Mutex
		total  tally
		pauses atomic.Int64
		wg     sync.WaitGroup
	)
	for range inProcess {
		wg.Go(func() {
			r, err := witnessWorker(b, spec, stop)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total.add(r)
			mu.Unlock()
		})
	}
	// The nemesis: stop each child at random moments, for longer than
	// the TTL.
	for _, k := range kids {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(witnessTTL + rand.N(5*witnessTTL)):
				}
				k.signal(syscall.SIGSTOP)
				pauses.Add(1)
				time.Sleep(witnessTTL + rand.N(2*witnessTTL)) // the pause length the fault schedule draws
				k.signal(syscall.SIGCONT)
			}
		})
	}
	for _, k := range kids {
		k.send("start")
	}
	time.Sleep(dur) // the run length of the workload
	close(stop)
	wg.Wait()
	for _, k := range kids {
		k.send("stop")
	}
	for _, k := range kids {
		var r tally
		line := k.expect("done", 60*time.Second)
		if _, err := fmt.Sscanf(line, "%d %d %d", &r.acked, &r.stale, &r.lostBefore); err != nil {
			t.Fatalf("child report %q: %v", line, err)
		}
		total.add(r)
	}

	var n int64
	if err := b.pool.QueryRow(ctx, `SELECT n FROM counter WHERE id = 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("%v, %d workers (%d processes paused %d times): counter %d, acknowledged %d, refused as stale %d, abandoned on a lost lock %d",
		dur, inProcess+children, children, pauses.Load(), n, total.acked, total.stale, total.lostBefore)
	if n != total.acked {
		t.Errorf("counter %d != %d acknowledged increments", n, total.acked)
	}
	if total.acked == 0 || total.stale == 0 {
		t.Errorf("the run exercised too little: %d acknowledged, %d stale", total.acked, total.stale)
	}
}

// witnessWorker increments the counter until stop is closed.
func witnessWorker(b backend, spec helperSpec, stop <-chan struct{}) (tally, error) {
	var r tally
	ctx := context.Background()
	l, err := baton.NewLocker(b.provider, nil)
	if err != nil {
		return r, err
	}
	guard, err := pgfence.NewGuard("counter", "id", nil)
	if err != nil {
		return r, err
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-stop; cancel() }()
	for actx.Err() == nil {
		lock, err := l.Acquire(actx, spec.Lock, &baton.AcquireOptions{AtMostFor: spec.AtMostFor})
		if err != nil {
			if actx.Err() != nil {
				break
			}
			return r, err
		}
		err = increment(ctx, b, guard, lock.Token(), 2*spec.AtMostFor)
		switch {
		case err == nil:
			r.acked++
		case errors.Is(err, fence.ErrStaleToken) && strings.HasPrefix(err.Error(), "mark"):
			r.lostBefore++
		case errors.Is(err, fence.ErrStaleToken):
			r.stale++
		default:
			_ = lock.Release(ctx)
			return r, err
		}
		_ = lock.Release(ctx)
	}
	return r, nil
}

// increment is a read-modify-write through the guard: mark, read, think,
// write.
func increment(ctx context.Context, b backend, g *pgfence.Guard, token int64, maxThink time.Duration) error {
	if err := g.Mark(ctx, b.pool, token, 1); err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	var n int64
	if err := b.pool.QueryRow(ctx, `SELECT n FROM counter WHERE id = 1`).Scan(&n); err != nil {
		return err
	}
	time.Sleep(rand.N(maxThink)) // think time of the workload
	return g.Update(ctx, b.pool, token, 1, map[string]any{"n": n + 1})
}

// witnessChild is a witness worker in a child process.
func witnessChild(t *testing.T, spec helperSpec, report func(string, ...any)) {
	b := openBackend(t, spec)
	in := stdinLines()
	report("ready")
	if cmd := <-in; cmd != "start" {
		t.Fatalf("command %q", cmd)
	}
	stop := make(chan struct{})
	go func() {
		for cmd := range in {
			if cmd == "stop" {
				close(stop)
				break
			}
		}
		for range in { // drain until the parent closes stdin
		}
	}()
	r, err := witnessWorker(b, spec, stop)
	if err != nil {
		t.Fatal(err)
	}
	report("done %d %d %d", r.acked, r.stale, r.lostBefore)
}
