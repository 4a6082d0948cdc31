package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func fenceCases() []testCase {
	return []testCase{
		{"IncreasesAcrossReleaseExpiryTakeover", testFenceIncreases},
		{"StableAcrossExtendAndRetry", testFenceStable},
	}
}

// Every grant of a name carries a larger fencing token than the one
// before, whether the previous lease was released, expired or taken over.
func testFenceIncreases(e *env) {
	name := e.name()
	last := int64(0)
	next := func(l batontype.Lease, how string) {
		e.t.Helper()
		if l.Token <= last {
			e.t.Errorf("%s: Token %d, not above the previous %d", how, l.Token, last)
		}
		last = l.Token
	}
	// Release, then another owner.
	a := lockprovider.NewOwner()
	next(e.mustAcquire(name, a, long, 0), "first grant")
	e.mustRelease(name, a)
	b := lockprovider.NewOwner()
	lease := e.short(50 * time.Millisecond)
	next(e.mustAcquire(name, b, lease, 0), "grant after release")
	// Expiry, then takeover.
	sleepPast(time.Now(), lease)
	c := lockprovider.NewOwner()
	next(e.mustAcquire(name, c, long, 0), "takeover after expiry")
	// Release inside AtLeastFor, expiry of the remaining hold, takeover.
	e.mustRelease(name, c)
	d := lockprovider.NewOwner()
	next(e.mustAcquire(name, d, long, e.short(20*time.Millisecond)), "grant after release")
	e.mustRelease(name, d)
	e.waitFree(name, "after AtLeastFor")
	for range 10 {
		o := lockprovider.NewOwner()
		next(e.mustAcquire(name, o, long, 0), "grant in a loop")
		e.mustRelease(name, o)
	}
}

// Extend and a repeated Acquire by the holder keep the token.
func testFenceStable(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	l := e.mustAcquire(name, owner, long, 0)
	if x := e.mustExtend(name, owner, 2*long, 0); x.Token != l.Token {
		e.t.Errorf("Extend changed Token %d to %d", l.Token, x.Token)
	}
	again, err := e.acquire(name, owner, long, 0)
	if err != nil {
		e.t.Fatalf("repeated Acquire: %v", err)
	}
	if again.Token != l.Token {
		e.t.Errorf("repeated Acquire changed Token %d to %d", l.Token, again.Token)
	}
	e.mustRelease(name, owner)
}
