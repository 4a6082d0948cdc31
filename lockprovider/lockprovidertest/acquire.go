package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func acquireCases() []testCase {
	return []testCase{
		{"FreeName", testAcquireFree},
		{"HeldByOther", testAcquireHeld},
		{"IndependentNames", testIndependentNames},
		{"ReacquireAfterRelease", testReacquireAfterRelease},
		{"Idempotent", testIdempotent},
		{"LeaseFields", testLeaseFields},
	}
}

// A free name is granted and then reads as held.
func testAcquireFree(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	l := e.mustAcquire(name, owner, long, 0)
	if !l.Tick.IsZero() {
		e.t.Errorf("Tick = %v, want zero for an acquire without a tick", l.Tick)
	}
	e.wantHeld(name, "after Acquire")
	e.mustRelease(name, owner)
	e.wantFree(name, "after Release")
}

// A held name cannot be taken by another owner, even one with the
// same LockedBy, and the refusal leaves the holder's lease intact.
func testAcquireHeld(e *env) {
	name, a, b := e.name(), lockprovider.NewOwner(), lockprovider.NewOwner()
	la := e.mustAcquire(name, a, long, 0)
	_, err := e.acquire(name, b, long, 0)
	e.wantErr(err, batontype.ErrNotAcquired, "second owner's Acquire")
	if in, ok := e.p.(lockprovider.Inspector); ok {
		info, err := in.Inspect(e.ctx, name)
		if err != nil {
			e.t.Fatalf("Inspect: %v", err)
		}
		if info.Token != la.Token || !nearTime(info.Until, la.Until, inspectTol) {
			e.t.Errorf("after a refused Acquire the lease reads Token %d Until %v, want %d %v", info.Token, info.Until, la.Token, la.Until)
		}
	}
	e.mustExtend(name, a, long, 0)
	e.mustRelease(name, a)
	e.mustAcquire(name, b, long, 0)
	e.mustRelease(name, b)
}

// Leases on different names do not interact.
func testIndependentNames(e *env) {
	n1, n2 := e.name(), e.name()
	a, b := lockprovider.NewOwner(), lockprovider.NewOwner()
	e.mustAcquire(n1, a, long, 0)
	l2 := e.mustAcquire(n2, b, long, 0)
	e.mustExtend(n1, a, 2*long, 0)
	e.mustRelease(n1, a)
	e.wantFree(n1, "after releasing n1")
	e.wantHeld(n2, "after releasing the other name")
	if in, ok := e.p.(lockprovider.Inspector); ok {
		info, err := in.Inspect(e.ctx, n2)
		if err != nil {
			e.t.Fatalf("Inspect: %v", err)
		}
		if !info.Held || info.Token != l2.Token || !nearTime(info.Until, l2.Until, inspectTol) {
			e.t.Errorf("n2 after operations on n1: %+v, want held with Token %d Until %v", info, l2.Token, l2.Until)
		}
	}
	e.mustRelease(n2, b)
}

// With AtLeastFor 0 a released name is free at once.
func testReacquireAfterRelease(e *env) {
	name := e.name()
	for i := range 10 {
		owner := lockprovider.NewOwner()
		e.mustAcquire(name, owner, long, 0)
		_, err := e.acquire(name, lockprovider.NewOwner(), long, 0)
		e.wantErr(err, batontype.ErrNotAcquired, "contender's Acquire")
		e.mustRelease(name, owner)
		if e.t.Failed() {
			e.t.Fatalf("round %d failed", i)
		}
	}
}

// Repeating an Acquire with the owner token that holds the lease returns the
// same grant, whatever the other parameters say.
func testIdempotent(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	first := e.mustAcquire(name, owner, long, time.Second)
	for _, again := range []struct{ atMost, atLeast time.Duration }{
		{long, time.Second},
		{2 * long, 0},
		{time.Second, 0},
	} {
		l, err := e.acquire(name, owner, again.atMost, again.atLeast)
		if err != nil {
			e.t.Fatalf("repeated Acquire by the holder (AtMostFor %v): %v", again.atMost, err)
		}
		if !sameLease(l, first) {
			e.t.Errorf("repeated Acquire (AtMostFor %v) = %+v, want the first grant %+v", again.atMost, l, first)
		}
	}
	e.wantHeld(name, "after repeated Acquires")
}

func sameLease(a, b batontype.Lease) bool {
	return a.Name == b.Name && a.Owner == b.Owner && a.Token == b.Token &&
		a.GrantedAt.Equal(b.GrantedAt) && a.Until.Equal(b.Until) &&
		a.AtLeastUntil.Equal(b.AtLeastUntil) && a.Tick.Equal(b.Tick)
}

// The lease's times agree with the requested durations.
func testLeaseFields(e *env) {
	for _, c := range []struct{ atMost, atLeast time.Duration }{
		{10 * time.Second, 3 * time.Second},
		{long, 0},
		{e.short(250 * time.Millisecond), e.short(250 * time.Millisecond)},
	} {
		name, owner := e.name(), lockprovider.NewOwner()
		before := time.Now()
		l := e.mustAcquire(name, owner, c.atMost, c.atLeast)
		if l.GrantedAt.IsZero() {
			e.t.Fatalf("GrantedAt is zero")
		}
		// The backend's clock may differ from ours, but not by minutes on a
		// test machine; this catches unit mistakes (s vs ms vs µs).
		if !nearTime(l.GrantedAt, before, 5*time.Minute) {
			e.t.Errorf("GrantedAt %v is far from the local time %v", l.GrantedAt, before)
		}
		if l.Until.Before(l.GrantedAt) {
			e.t.Errorf("Until %v before GrantedAt %v", l.Until, l.GrantedAt)
		}
		if got := l.Until.Sub(l.GrantedAt); !near(got, c.atMost, tol) {
			e.t.Errorf("Until-GrantedAt = %v, want AtMostFor %v", got, c.atMost)
		}
		if got := l.AtLeastUntil.Sub(l.GrantedAt); !near(got, c.atLeast, tol) {
			e.t.Errorf("AtLeastUntil-GrantedAt = %v, want AtLeastFor %v", got, c.atLeast)
		}
	}
}
