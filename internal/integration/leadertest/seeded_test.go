package leadertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/leader"
	"github.com/baton-go/baton/lockprovider"
)

// Candidates run for one leadership on a memory provider, on the fake
// clock of a synctest bubble, with the seed drawing the term length and
// each call's delays: before the provider sees it (a paused or slow
// sender, up to 1.5 terms) and before its reply. On some seeds an operator
// force-releases the leader now and then. Checked over the whole run:
// terms' tokens grow in the order they began; a term's context is done
// whenever Check no longer trusts it; and, with no force-release, no term
// began before the previous one's context was done, so no two were ever
// trusted at once.
func TestSeededTerms(t *testing.T) {
	for _, seed := range testenv.Seeds(t, 40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testTerms(t, seed) })
		})
	}
}

// term is what one candidate saw of one term.
type term struct {
	who        int
	token      int64
	granted    time.Time // the lease's GrantedAt
	start, end time.Time // fn called; fn's context seen done
}

func testTerms(t *testing.T, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	ttl := time.Duration(1+rng.IntN(30)) * time.Second
	n := 2 + rng.IntN(3)
	operator := rng.IntN(2) == 0
	length := time.Duration(20+rng.IntN(30)) * ttl
	mem := newMemory(t, nil)
	p := &delayed{Provider: mem, rng: rand.New(rand.NewPCG(uint64(seed), 8)), ttl: ttl}
	desc := fmt.Sprintf("SEED=%d (term %v, %d candidates, force-release %v)", seed, ttl, n, operator)

	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu    sync.Mutex
		terms []*term
		wg    sync.WaitGroup
	)
	for i := range n {
		e, err := leader.New(p, "leader", &leader.Config{LockedBy: fmt.Sprint(i), AtMostFor: ttl})
		if err != nil {
			t.Fatal(err)
		}
		step := ttl / time.Duration(2+rng.IntN(8))
		wg.Go(func() {
			err := e.Run(ctx, func(ctx context.Context, tm *leader.Term) error {
				rec := &term{who: i, token: tm.Token(), granted: tm.Lease().GrantedAt, start: time.Now()}
				mu.Lock()
				terms = append(terms, rec)
				mu.Unlock()
				for {
					select {
					case <-ctx.Done():
						mu.Lock()
						rec.end = time.Now()
						mu.Unlock()
						return ctx.Err()
					case <-time.After(step):
						if err := tm.Check(); err != nil && ctx.Err() == nil {
							t.Errorf("%s: term %d not trusted by Check (%v) but its context is not done", desc, rec.token, err)
						}
					}
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: candidate %d: Run: %v", desc, i, err)
			}
		})
	}
	forced := 0
	if operator {
		orng := rand.New(rand.NewPCG(uint64(seed), 9))
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Duration(1+orng.IntN(5)) * ttl):
				}
				info, err := mem.Inspect(ctx, "leader")
				if err != nil || !info.Held {
					continue
				}
				if _, err := mem.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: "leader", Token: info.Token}); err == nil {
					forced++
				}
			}
		})
	}
	time.Sleep(length)
	cancel()
	wg.Wait()

	// Every term has ended (Run resigned it). Tokens grow with the grants.
	// A force-released term's holder may begin after the next term (its
	// reply was late), so it is by grant, not by start, that they grow.
	slices.SortFunc(terms, func(a, b *term) int { return a.granted.Compare(b.granted) })
	if len(terms) == 0 {
		t.Errorf("%s: no term in %v", desc, length)
	}
	var high, group int64 // the largest token granted before tm's instant, and at it
	for i, tm := range terms {
		if i > 0 && tm.granted.After(terms[i-1].granted) {
			high = max(high, group)
		}
		group = max(group, tm.token)
		if tm.token <= high {
			t.Errorf("%s: candidate %d granted token %d at %v, after token %d", desc, tm.who, tm.token, tm.granted, high)
		}
	}
	if !operator {
		// In the bubble a context is done at the instant its window ends.
		slices.SortFunc(terms, func(a, b *term) int { return a.start.Compare(b.start) })
		for i, tm := range terms {
			for _, prev := range terms[:i] {
				if tm.start.Before(prev.end) {
					t.Errorf("%s: candidate %d's term %d began at %v, before candidate %d's term %d (from %v) was done at %v",
						desc, tm.who, tm.token, tm.start, prev.who, prev.token, prev.start, prev.end)
				}
			}
		}
	}
	t.Logf("%s: %d terms, %d force-released, %d calls delayed past the term", desc, len(terms), forced, p.late())
}

// delayed delays each Acquire and Extend before the provider sees it and
// before its reply, by durations drawn from rng.
type delayed struct {
	lockprovider.Provider
	ttl time.Duration

	mu    sync.Mutex
	rng   *rand.Rand
	lates int
}

// delays draws a call's delays: mostly none, sometimes up to half a term,
// now and then (a pause) past the whole term.
func (d *delayed) delays() (before, after time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	draw := func() time.Duration {
		switch r := d.rng.IntN(20); {
		case r < 14:
			return 0
		case r < 19:
			return time.Duration(d.rng.Int64N(int64(d.ttl / 2)))
		default:
			d.lates++
			return d.ttl + time.Duration(d.rng.Int64N(int64(d.ttl/2)))
		}
	}
	before = draw()
	after = draw()
	return before, after
}

func (d *delayed) late() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lates
}

func (d *delayed) Acquire(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error) {
	return d.call(func() (batontype.Lease, error) { return d.Provider.Acquire(ctx, ap) })
}

func (d *delayed) Extend(ctx context.Context, ep lockprovider.ExtendParams) (batontype.Lease, error) {
	return d.call(func() (batontype.Lease, error) { return d.Provider.Extend(ctx, ep) })
}

// call makes a provider call with the delays drawn for it.
func (d *delayed) call(f func() (batontype.Lease, error)) (batontype.Lease, error) {
	before, after := d.delays()
	time.Sleep(before)
	l, err := f()
	time.Sleep(after)
	return l, err
}
