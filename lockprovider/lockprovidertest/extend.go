package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func extendCases() []testCase {
	return []testCase{
		{"Longer", testExtendLonger},
		{"Shorter", testExtendShorter},
		{"AtLeastForHonoured", testExtendAtLeastFor},
		{"LeaseFields", testExtendFields},
		{"AfterRelease", testExtendAfterRelease},
		{"UnknownName", testUnknownName},
	}
}

// Extends keep the lease past its original expiry; chained extends work.
func testExtendLonger(e *env) {
	e.timed(150*time.Millisecond, func(scale time.Duration) bool {
		name, owner := e.name(), lockprovider.NewOwner()
		first := 150 * time.Millisecond * scale
		longer := 2 * time.Second * scale
		start := time.Now()
		l := e.mustAcquire(name, owner, first, 0)
		granted := time.Now() // the first lease ends by granted+first
		var extStart time.Time
		for i := range 3 {
			extStart = time.Now()
			next, err := e.extend(name, owner, longer, 0)
			if err != nil {
				if time.Since(start) >= first-tol {
					return false // the first lease may have lapsed first
				}
				e.t.Fatalf("extend %d: %v", i, err)
			}
			e.checkLease(next, name, owner)
			if next.Token != l.Token {
				e.t.Errorf("extend %d changed Token from %d to %d", i, l.Token, next.Token)
			}
			if next.Until.Before(l.Until) {
				e.t.Errorf("extend %d moved Until back from %v to %v", i, l.Until, next.Until)
			}
			l = next
		}
		sleepPast(granted, first)
		if !e.heldUntil(name, extStart, longer, "past the original expiry") {
			return false
		}
		e.mustRelease(name, owner)
		e.wantFree(name, "after releasing an extended lease")
		return true
	})
}

// Extend may shorten a lease; it then lapses at the new, earlier time.
func testExtendShorter(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(name, owner, long, 0)
	shorter := e.short(100 * time.Millisecond)
	extStart := time.Now()
	e.mustExtend(name, owner, shorter, 0)
	freeAt := e.waitFree(name, "after shortening the lease")
	if freeAt.Before(extStart.Add(shorter - tol)) {
		e.t.Errorf("free %v after Extend, before its AtMostFor %v", freeAt.Sub(extStart), shorter)
	}
}

// The AtLeastFor of the latest Extend bounds a later release.
func testExtendAtLeastFor(e *env) {
	e.timed(300*time.Millisecond, func(scale time.Duration) bool {
		name, owner := e.name(), lockprovider.NewOwner()
		atLeast := 300 * time.Millisecond * scale
		e.mustAcquire(name, owner, long, 0)
		extStart := time.Now()
		e.mustExtend(name, owner, long, atLeast)
		e.mustRelease(name, owner)
		if !e.heldUntil(name, extStart, atLeast, "released inside the extension's AtLeastFor") {
			return false
		}
		freeAt := e.waitFree(name, "after the extension's AtLeastFor")
		if freeAt.Before(extStart.Add(atLeast - tol)) {
			e.t.Errorf("free %v after Extend, before its AtLeastFor %v", freeAt.Sub(extStart), atLeast)
		}
		return true
	})
}

// An extended lease keeps its identity and its times agree with the request.
func testExtendFields(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	l := e.mustAcquire(name, owner, 5*time.Second, 0)
	x := e.mustExtend(name, owner, 10*time.Second, 2*time.Second)
	if x.Token != l.Token {
		e.t.Errorf("Extend changed Token from %d to %d", l.Token, x.Token)
	}
	if !x.GrantedAt.Equal(l.GrantedAt) {
		e.t.Errorf("Extend changed GrantedAt from %v to %v", l.GrantedAt, x.GrantedAt)
	}
	if !x.Until.After(l.Until) {
		e.t.Errorf("Extend to 10s from a 5s lease: Until %v not after %v", x.Until, l.Until)
	}
	if got := x.Until.Sub(x.AtLeastUntil); !near(got, 8*time.Second, tol) {
		e.t.Errorf("after Extend(10s, 2s) Until-AtLeastUntil = %v, want 8s", got)
	}
	if got := x.Until.Sub(l.GrantedAt); got < 10*time.Second-tol {
		e.t.Errorf("after Extend(10s) Until is %v after the grant, want at least 10s", got)
	}
	e.mustRelease(name, owner)
}

// After a release, the old owner can neither extend nor release.
func testExtendAfterRelease(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(name, owner, long, 0)
	e.mustRelease(name, owner)
	_, err := e.extend(name, owner, long, 0)
	e.wantErr(err, batontype.ErrNotHeld, "Extend after Release")
	e.wantErr(e.release(name, owner), batontype.ErrNotHeld, "second Release")
	e.wantFree(name, "after a refused Extend of a released lease")
}

// A name never acquired cannot be extended or released.
func testUnknownName(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	_, err := e.extend(name, owner, long, 0)
	e.wantErr(err, batontype.ErrNotHeld, "Extend of an unknown name")
	e.wantErr(e.release(name, owner), batontype.ErrNotHeld, "Release of an unknown name")
	e.wantFree(name, "after refused operations on an unknown name")
}
