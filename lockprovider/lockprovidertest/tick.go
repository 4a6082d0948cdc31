package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func tickCases() []testCase {
	return []testCase{
		{"NewerOnly", testTickNewerOnly},
		{"StaleAfterExpiry", testTickAfterExpiry},
		{"PerName", testTickPerName},
	}
}

// baseTick is a whole second, so every backend stores it exactly.
var baseTick = time.Unix(1_800_000_000, 0)

func (e *env) acquireTick(name, owner string, tick time.Time, atMostFor time.Duration) (batontype.Lease, error) {
	l, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{
		Name: name, Owner: owner, LockedBy: "lockprovidertest",
		AtMostFor: atMostFor, Tick: tick,
	})
	e.slow(err, atMostFor, "Acquire with a tick")
	return l, err
}

// grantTick acquires name for tick with a fresh owner, checks the lease, and
// releases it.
func (e *env) grantTick(name string, tick time.Time, why string) {
	e.t.Helper()
	owner := lockprovider.NewOwner()
	l, err := e.acquireTick(name, owner, tick, long)
	if err != nil {
		e.t.Fatalf("%s: Acquire with tick %v: %v", why, tick, err)
	}
	if !l.Tick.Equal(tick) {
		e.t.Errorf("%s: lease Tick = %v, want %v", why, l.Tick, tick)
	}
	e.mustRelease(name, owner)
}

func (e *env) refuseTick(name string, tick time.Time, why string) {
	e.t.Helper()
	_, err := e.acquireTick(name, lockprovider.NewOwner(), tick, long)
	e.wantErr(err, batontype.ErrStaleTick, why)
}

// A tick is granted once: the same or an older tick is refused with
// ErrStaleTick, a newer one (even by a millisecond) is granted, and an
// acquire without a tick neither checks nor resets the newest tick.
func testTickNewerOnly(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	t1 := baseTick
	l, err := e.acquireTick(name, owner, t1, long)
	if err != nil {
		e.t.Fatalf("first Acquire with a tick: %v", err)
	}
	if !l.Tick.Equal(t1) {
		e.t.Errorf("lease Tick = %v, want %v", l.Tick, t1)
	}
	// The holder's retry is idempotent, not stale.
	again, err := e.acquireTick(name, owner, t1, long)
	if err != nil {
		e.t.Fatalf("holder's repeated Acquire with the same tick: %v", err)
	}
	if !sameLease(again, l) {
		e.t.Errorf("holder's repeated Acquire = %+v, want %+v", again, l)
	}
	e.mustRelease(name, owner)

	e.refuseTick(name, t1, "same tick again")
	e.refuseTick(name, t1.Add(-time.Hour), "older tick")
	e.wantFree(name, "after refused ticks")
	t2 := t1.Add(time.Millisecond)
	e.grantTick(name, t2, "tick 1ms newer")

	// No tick: no check, and the newest tick stays t2.
	e.wantFree(name, "acquire without a tick")
	e.refuseTick(name, t2, "tick after an acquire without one")
	e.grantTick(name, t2.Add(time.Second), "newer tick after an acquire without one")
}

// A lease that lapsed still used up its tick.
func testTickAfterExpiry(e *env) {
	name := e.name()
	lease := e.short(50 * time.Millisecond)
	if _, err := e.acquireTick(name, lockprovider.NewOwner(), baseTick, lease); err != nil {
		e.t.Fatalf("Acquire with a tick: %v", err)
	}
	sleepPast(time.Now(), lease)
	e.refuseTick(name, baseTick, "same tick after the lease lapsed")
	e.grantTick(name, baseTick.Add(time.Minute), "next tick after the lease lapsed")
}

// Ticks are remembered per name.
func testTickPerName(e *env) {
	n1, n2 := e.name(), e.name()
	e.grantTick(n1, baseTick.Add(time.Hour), "tick on n1")
	e.grantTick(n2, baseTick, "older tick on n2")
	e.refuseTick(n1, baseTick.Add(time.Hour), "same tick on n1")
}
