package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/etcd"
	"github.com/baton-go/baton/scheduler"
)

// Without ClockExpiry, a sub-second lease reports Until = GrantedAt +
// AtMostFor, while etcd keeps the name for the whole-second TTL: nobody
// else gets it before Until (nor, here, before etcd's minimum lease of
// 2 s ends), the holder can no longer extend it after Until, and the name
// becomes free by itself once etcd ends the lease.
func TestSubSecond(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	cli := client(t, c)
	p := newProvider(t, cli, etcd.Config{})
	ctx := t.Context()
	const atMostFor = 300 * time.Millisecond
	name, owner := "sub-second", lockprovider.NewOwner()
	l, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: atMostFor})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if got := l.Until.Sub(l.GrantedAt); got != atMostFor {
		t.Errorf("Until-GrantedAt = %v, want AtMostFor %v", got, atMostFor)
	}
	time.Sleep(time.Until(l.Until.Add(50 * time.Millisecond)))
	if _, err := acquire(t, p, name, time.Minute); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire by another owner just after Until: %v, want ErrNotAcquired (etcd's lease still runs)", err)
	}
	_, err = p.Extend(ctx, lockprovider.ExtendParams{Name: name, Owner: owner, AtMostFor: time.Minute})
	if !errors.Is(err, batontype.ErrNotHeld) {
		t.Errorf("Extend after Until: %v, want ErrNotHeld", err)
	}
	info, err := p.Inspect(ctx, name)
	if err != nil || !info.Held || info.Token != l.Token {
		t.Errorf("Inspect after Until: %+v, %v; want held with token %d", info, err, l.Token)
	}
	var freeAt time.Time
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if l2, err := acquire(t, p, name, time.Minute); err == nil {
			freeAt = time.Now()
			if l2.Token <= l.Token {
				t.Errorf("token after expiry %d, want > %d", l2.Token, l.Token)
			}
			break
		} else if !errors.Is(err, batontype.ErrNotAcquired) {
			t.Fatalf("Acquire: %v", err)
		}
	}
	switch {
	case freeAt.IsZero():
		t.Fatal("name not free 10s after a 300ms lease")
	case freeAt.Before(l.GrantedAt.Add(2 * time.Second)):
		t.Errorf("name free %v after the grant, before etcd's minimum lease of 2s ended", freeAt.Sub(l.GrantedAt))
	}
	t.Logf("300ms lease: free for others after %v", freeAt.Sub(l.GrantedAt))
}

// The etcd leader is killed, then another member is restarted, while
// workers take turns on one name: no two hold it at once, every grant's
// token is larger than the one before, and grants continue after the
// faults.
func TestLeaderKilledAndMemberRestarted(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	const workers = 4
	var (
		inside    atomic.Int32
		mu        sync.Mutex
		last      int64
		grants    [3]int // before, during, after the faults
		phase     atomic.Int32
		overlaps  atomic.Int32
		regressed atomic.Int32
	)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range workers {
		p := newProviderPrefix(t, client(t, c), "fault/")
		wg.Go(func() {
			for ctx.Err() == nil {
				owner := lockprovider.NewOwner()
				l, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "n", Owner: owner, AtMostFor: 2 * time.Second})
				if err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if time.Now().Before(l.Until) { // the grant is still worth trusting
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					mu.Lock()
					if l.Token <= last {
						regressed.Add(1)
						t.Errorf("token %d after %d", l.Token, last)
					}
					last = l.Token
					grants[phase.Load()]++
					mu.Unlock()
					time.Sleep(2 * time.Millisecond)
					inside.Add(-1)
				}
				_ = p.Release(context.WithoutCancel(ctx), lockprovider.ReleaseParams{Name: "n", Owner: owner})
			}
		})
	}
	time.Sleep(2 * time.Second)
	phase.Store(1)
	leader, err := c.KillLeader(ctx)
	if err != nil {
		t.Fatalf("kill leader: %v", err)
	}
	t.Logf("killed leader %s", c.Members[leader].Name)
	time.Sleep(2 * time.Second)
	if err := c.Members[leader].Restart(); err != nil {
		t.Fatalf("restart %s: %v", c.Members[leader].Name, err)
	}
	other := (leader + 1) % len(c.Members)
	if err := c.Members[other].Restart(); err != nil {
		t.Fatalf("restart %s: %v", c.Members[other].Name, err)
	}
	t.Logf("restarted %s and %s", c.Members[leader].Name, c.Members[other].Name)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	if _, err := c.WaitLeader(wctx); err != nil {
		t.Fatal(err)
	}
	wcancel()
	phase.Store(2)
	// Grants resume by themselves: wait for a few, bounded (a worker may
	// first sit out a call to a member that was down, up to Timeout).
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		n := grants[2]
		mu.Unlock()
		if n >= 5 {
			break
		}
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("grants before/during/after the faults: %v; last token %d", grants, last)
	if overlaps.Load() != 0 {
		t.Errorf("%d overlapping holders", overlaps.Load())
	}
	if grants[0] == 0 || grants[2] == 0 {
		t.Errorf("grants before/during/after the faults: %v, want some before and after", grants)
	}
}

// Three scheduler instances, each on a client of its own, run a locked job
// every 400 ms while the etcd leader is killed and restarted: every tick
// runs at most once, tokens increase with the ticks, and runs resume after
// the fault without intervention.
func TestSchedulerExactlyOnce(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	const every = 400 * time.Millisecond
	w := newWitness()
	var scheds []*scheduler.Scheduler
	for i := range 3 {
		p := newProviderPrefix(t, client(t, c), "sched/")
		s, err := scheduler.New(p, &scheduler.Config{LockedBy: "instance-" + string(rune('a'+i)), CallTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Every(every).Locked("job", scheduler.AtMostFor(2*time.Second)).Do(w.job); err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(8 * every)
	leader, err := c.KillLeader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	time.Sleep(5 * every)
	if err := c.Members[leader].Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * every)
	for _, s := range scheds {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}
	w.check(t, 23, killed.Add(2*time.Second))
}

// witness records the runs of a scheduled job, as a UNIQUE(job, tick)
// table would.
type witness struct {
	mu     sync.Mutex
	runs   map[time.Time]int64 // tick -> token
	dups   []time.Time
	active atomic.Int32
	over   atomic.Int32
}

func newWitness() *witness { return &witness{runs: map[time.Time]int64{}} }

func (w *witness) job(ctx context.Context, run scheduler.Run) error {
	if w.active.Add(1) != 1 {
		w.over.Add(1)
	}
	defer w.active.Add(-1)
	w.mu.Lock()
	if _, dup := w.runs[run.Tick]; dup {
		w.dups = append(w.dups, run.Tick)
	}
	w.runs[run.Tick] = run.Token
	w.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return nil
}

// check fails t on a tick run twice, overlapping runs, tokens not
// increasing with ticks, or no run after resumeBy; ticks is the number of
// ticks the run spanned, for the log.
func (w *witness) check(t *testing.T, ticks int, resumeBy time.Time) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.dups) > 0 {
		t.Errorf("ticks run twice: %v", w.dups)
	}
	if n := w.over.Load(); n > 0 {
		t.Errorf("%d runs overlapped", n)
	}
	ordered := make([]time.Time, 0, len(w.runs))
	for tick := range w.runs {
		ordered = append(ordered, tick)
	}
	slices.SortFunc(ordered, time.Time.Compare)
	var last time.Time
	var lastToken int64
	resumed := len(ordered) > 0 && ordered[len(ordered)-1].After(resumeBy)
	for _, tick := range ordered {
		if token := w.runs[tick]; token <= lastToken {
			t.Errorf("tick %v ran with token %d, not above %d of tick %v", tick, token, lastToken, last)
		} else {
			last, lastToken = tick, token
		}
	}
	if !resumed {
		t.Errorf("no run for a tick after %v: the scheduler did not resume", resumeBy)
	}
	t.Logf("%d of about %d ticks ran, each once", len(w.runs), ticks)
}

// A holder that stalls past its lease (a pause, a long GC) and then writes
// with its old token is rejected by the fenced resource once the next
// holder, whose token is a later revision, has written.
func TestPausedHolderIsFenced(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	p := newProvider(t, client(t, c), etcd.Config{})
	var res fence.Resource
	a, err := acquire(t, p, "n", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Do(a.Token, nil); err != nil {
		t.Fatalf("first holder's write: %v", err)
	}
	var b batontype.Lease
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) { // the pause
		if b, err = acquire(t, p, "n", time.Minute); err == nil {
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

// With two of three members down there is no quorum: Acquire, Release and
// NotifyRelease report unavailability, never a refusal; with the members
// back, the name's state is whole (held, or released by the release sent
// during the outage) and grants resume with larger tokens.
func TestQuorumLost(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	p, err := etcd.New(client(t, c), &etcd.Config{Prefix: "q/", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	owner := lockprovider.NewOwner()
	l, err := p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "n", Owner: owner, AtMostFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c.Members[1].Kill()
	c.Members[2].Kill()
	_, err = acquire(t, p, "n", time.Minute)
	if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("Acquire without quorum: %v, want ErrUnavailable", err)
	}
	err = p.Release(t.Context(), lockprovider.ReleaseParams{Name: "n", Owner: owner})
	if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotHeld) {
		t.Errorf("Release without quorum: %v, want ErrUnavailable", err)
	}
	if _, err := p.NotifyRelease(t.Context(), "n", make(chan struct{}, 1)); !errors.Is(err, batontype.ErrUnavailable) {
		t.Errorf("NotifyRelease without quorum: %v, want ErrUnavailable", err)
	}
	for _, m := range c.Members[1:] {
		if err := m.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := c.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	// The release during the outage had an unknown outcome: the member
	// that stayed up may have logged it and committed it once the others
	// returned. Either the lease is as it was, or it was released.
	var info batontype.LeaseInfo
	for {
		if info, err = p.Inspect(ctx, "n"); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Inspect after the outage: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if info.Token != l.Token {
		t.Errorf("after the outage: token %d, want %d", info.Token, l.Token)
	}
	if info.Held {
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "n", Owner: owner}); err != nil {
			t.Errorf("Release after the outage: %v", err)
		}
	} else {
		t.Log("the release sent during the outage took effect when the quorum returned")
	}
	next, err := acquire(t, p, "n", time.Minute)
	if err != nil || next.Token <= l.Token {
		t.Errorf("Acquire after the outage: %+v, %v; want a token above %d", next, err, l.Token)
	}
}

// TestFaultQuorumLossIsUnavailable loses and regains the quorum of a
// three-member cluster several times (a majority killed, then restarted one
// member at a time) while workers acquire names nobody else asks for, with
// timeouts short enough to end on every kind of failure etcd reports: a
// proposal stuck without a leader, a leader change, a member dying under
// the call or refusing its dial. A name nobody holds cannot be refused, so
// every failed attempt must report unavailability: never ErrNotAcquired,
// never a bare error.
func TestFaultQuorumLossIsUnavailable(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu       sync.Mutex
		attempts int
		failed   int
		bad      []string
		kinds    = map[string]int{}
	)
	record := func(op string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if op == "acquire" {
			attempts++
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		failed++
		kinds[kind(err)]++
		if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) {
			bad = append(bad, op+": "+err.Error())
		}
	}
	timeouts := []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second}
	var wg sync.WaitGroup
	for i := range 6 {
		p, err := etcd.New(client(t, c), &etcd.Config{Prefix: "quorum/", Timeout: timeouts[i%len(timeouts)]})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				name := fmt.Sprintf("w%d-%d", i, n)
				owner := lockprovider.NewOwner()
				_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: 2 * time.Second})
				record("acquire", err)
				if err == nil {
					err = p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
					if errors.Is(err, batontype.ErrNotHeld) {
						err = nil // a retried release may find it gone
					}
					record("release", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	time.Sleep(time.Second)
	for round := range 3 {
		leader, err := c.WaitLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A majority down, the leader among them in every other round.
		down := []int{(leader + 1) % 3, (leader + 2) % 3}
		if round%2 == 1 {
			down[0] = leader
		}
		for _, i := range down {
			c.Members[i].Kill()
		}
		time.Sleep(3 * time.Second)
		for _, i := range down {
			if err := c.Members[i].Restart(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
		}
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = c.WaitLeader(wctx)
		wcancel()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d acquires, %d failed operations: %v", attempts, failed, kinds)
	if failed == 0 {
		t.Fatal("no operation failed: the faults were not observed")
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d failed operations do not report unavailability:", len(bad), failed)
		for _, b := range bad[:min(len(bad), 20)] {
			t.Error("  " + b)
		}
	}
}

// kind condenses an error to its cause, for the test's log.
func kind(err error) string {
	s := err.Error()
	for {
		var u interface{ Unwrap() error }
		if !errors.As(err, &u) || u.Unwrap() == nil {
			break
		}
		err = u.Unwrap()
		s = err.Error()
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
