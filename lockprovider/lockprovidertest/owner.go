package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func ownerCases() []testCase {
	return []testCase{
		{"StaleOwnerAfterExpiry", testStaleAfterExpiry},
		{"StaleOwnerAfterTakeover", testStaleAfterTakeover},
		{"ForeignOwnerWhileHeld", testForeignOwner},
	}
}

// After A's lease lapsed and B took the name (from the same host,
// with the same LockedBy), A's Release and Extend return ErrNotHeld and leave
// B's lease and expiry untouched.
func testStaleAfterExpiry(e *env) {
	name, a, b := e.name(), lockprovider.NewOwner(), lockprovider.NewOwner()
	lease := e.short(50 * time.Millisecond)
	e.mustAcquire(name, a, lease, 0)
	sleepPast(time.Now(), lease)
	lb := e.mustAcquire(name, b, long, 0)
	e.checkUntouchedBy(name, a, lb)
	e.mustExtend(name, b, long, 0)
	e.mustRelease(name, b)
	e.wantFree(name, "after the new holder released")
}

// After A released and B took the name, A is refused everything.
func testStaleAfterTakeover(e *env) {
	name, a, b := e.name(), lockprovider.NewOwner(), lockprovider.NewOwner()
	e.mustAcquire(name, a, long, 0)
	e.mustRelease(name, a)
	lb := e.mustAcquire(name, b, long, 0)
	_, err := e.acquire(name, a, long, 0)
	e.wantErr(err, batontype.ErrNotAcquired, "old owner's Acquire")
	e.checkUntouchedBy(name, a, lb)
	e.mustRelease(name, b)
}

// An owner that never held the name cannot release or extend it.
func testForeignOwner(e *env) {
	name, a := e.name(), lockprovider.NewOwner()
	la := e.mustAcquire(name, a, long, 0)
	e.checkUntouchedBy(name, lockprovider.NewOwner(), la)
	e.mustRelease(name, a)
}

// checkUntouchedBy has the non-holder stale release and extend name (longer
// and shorter), expects ErrNotHeld each time, and then checks that the
// holder's lease l is still in force and unchanged.
func (e *env) checkUntouchedBy(name, stale string, l batontype.Lease) {
	e.t.Helper()
	e.wantErr(e.release(name, stale), batontype.ErrNotHeld, "stale owner's Release")
	_, err := e.extend(name, stale, batontype.MinDuration, 0)
	e.wantErr(err, batontype.ErrNotHeld, "stale owner's Extend to 1ms")
	_, err = e.extend(name, stale, 2*long, 2*long)
	e.wantErr(err, batontype.ErrNotHeld, "stale owner's Extend to 2m")
	// Had the 1ms extend applied, the lease would lapse now.
	time.Sleep(20 * time.Millisecond)
	e.wantHeld(name, "after a stale owner's Release and Extend")
	if in, ok := e.p.(lockprovider.Inspector); ok {
		info, err := in.Inspect(e.ctx, name)
		if err != nil {
			e.t.Fatalf("Inspect: %v", err)
		}
		if !info.Held || info.Token != l.Token || !nearTime(info.Until, l.Until, inspectTol) {
			e.t.Errorf("holder's lease after stale operations reads %+v, want held with Token %d, Until %v", info, l.Token, l.Until)
		}
	}
	// The holder still owns it: a repeated Acquire returns its grant.
	again, err := e.acquire(name, l.Owner, long, 0)
	if err != nil {
		e.t.Fatalf("holder's repeated Acquire after stale operations: %v", err)
	}
	if !sameLease(again, l) {
		e.t.Errorf("holder's lease changed by stale operations: %+v, want %+v", again, l)
	}
}
