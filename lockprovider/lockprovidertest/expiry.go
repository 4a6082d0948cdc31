package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func expiryCases() []testCase {
	return []testCase{
		{"LapsesAfterAtMostFor", testLapses},
		{"ExpiredHolderCannotExtendOrRelease", testExpiredHolder},
		{"AtLeastForHoldsAfterRelease", testAtLeastFor},
		{"ReleaseAfterAtLeastForFrees", testReleaseAfterAtLeastFor},
	}
}

// An unreleased lease lapses after AtMostFor and the name is
// then taken over by another owner.
func testLapses(e *env) {
	e.timed(100*time.Millisecond, func(scale time.Duration) bool {
		name, owner := e.name(), lockprovider.NewOwner()
		lease := 100 * time.Millisecond * scale
		start := time.Now()
		e.mustAcquire(name, owner, lease, 0)
		if !e.heldUntil(name, start, lease, "before AtMostFor") {
			return false
		}
		freeAt := e.waitFree(name, "after AtMostFor")
		if freeAt.Before(start.Add(lease - tol)) {
			e.t.Errorf("name free after %v, before AtMostFor %v", freeAt.Sub(start), lease)
		}
		return true
	})
}

// Once the lease lapsed, its owner can neither extend (revive) nor
// release it.
func testExpiredHolder(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	lease := e.short(50 * time.Millisecond)
	e.mustAcquire(name, owner, lease, 0)
	sleepPast(time.Now(), lease)
	_, err := e.extend(name, owner, long, 0)
	e.wantErr(err, batontype.ErrNotHeld, "Extend after expiry")
	e.wantErr(e.release(name, owner), batontype.ErrNotHeld, "Release after expiry")
	e.wantFree(name, "after a refused Extend of an expired lease")
}

// A release before AtLeastFor has passed keeps the name held until
// GrantedAt+AtLeastFor, and not longer.
func testAtLeastFor(e *env) {
	e.timed(300*time.Millisecond, func(scale time.Duration) bool {
		name, owner := e.name(), lockprovider.NewOwner()
		atLeast := 300 * time.Millisecond * scale
		start := time.Now()
		e.mustAcquire(name, owner, long, atLeast)
		if err := e.release(name, owner); err != nil {
			e.t.Fatalf("Release inside AtLeastFor: %v", err)
		}
		if !e.heldUntil(name, start, atLeast, "released inside AtLeastFor") {
			return false
		}
		freeAt := e.waitFree(name, "after AtLeastFor")
		if freeAt.Before(start.Add(atLeast - tol)) {
			e.t.Errorf("name free %v after the grant, before AtLeastFor %v", freeAt.Sub(start), atLeast)
		}
		return true
	})
}

// A release after AtLeastFor has passed ends the lease at once.
func testReleaseAfterAtLeastFor(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	atLeast := e.short(50 * time.Millisecond)
	e.mustAcquire(name, owner, long, atLeast)
	sleepPast(time.Now(), atLeast)
	e.mustRelease(name, owner)
	e.wantFree(name, "released after AtLeastFor")
}
