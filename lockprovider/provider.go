package lockprovider

import (
	"context"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Provider grants, extends and releases leases. Implementations must be safe
// for concurrent use and must make each method one atomic round trip to the
// backend.
type Provider interface {
	// Acquire grants the lease on p.Name to p.Owner if the name is free or
	// its lease has expired, and returns batontype.ErrNotAcquired if another owner
	// holds it. If p.Owner already holds the lease, Acquire returns that
	// same grant unchanged. With a non-zero p.Tick, Acquire returns
	// batontype.ErrStaleTick unless p.Tick is newer than the last tick granted for
	// the name.
	Acquire(ctx context.Context, p AcquireParams) (batontype.Lease, error)

	// Extend sets the lease to end AtMostFor from now (server time), longer
	// or shorter than before, and moves the AtLeastFor bound to
	// now+AtLeastFor. It returns batontype.ErrNotHeld if p.Owner does not hold a
	// live lease on p.Name.
	Extend(ctx context.Context, p ExtendParams) (batontype.Lease, error)

	// Release ends the lease, or, when its AtLeastFor bound lies in the
	// future, shortens it to end at that bound. It returns batontype.ErrNotHeld if
	// p.Owner does not hold a live lease on p.Name.
	Release(ctx context.Context, p ReleaseParams) error
}

// AcquireParams are the inputs of Provider.Acquire.
type AcquireParams struct {
	Name  string // the lock name; see batontype.ValidateName
	Owner string // random owner token of this acquisition; see NewOwner

	// LockedBy identifies the holder for operators (host, instance). It is
	// informational only and never decides ownership.
	LockedBy string

	AtMostFor  time.Duration // lease length; > 0
	AtLeastFor time.Duration // minimum hold after a release; 0 <= AtLeastFor <= AtMostFor

	// Tick, when non-zero, is the scheduled time this acquisition is for.
	Tick time.Time
}

// ExtendParams are the inputs of Provider.Extend.
type ExtendParams struct {
	Name       string
	Owner      string
	AtMostFor  time.Duration // new lease end, from now; > 0
	AtLeastFor time.Duration // new minimum-hold bound, from now; 0 <= AtLeastFor <= AtMostFor
}

// ReleaseParams are the inputs of Provider.Release.
type ReleaseParams struct {
	Name  string
	Owner string
}

// ReleaseNotifier is implemented by providers that can tell waiters when a
// lease may have become free, so they need not poll. One backend
// subscription serves all waiters of a provider.
type ReleaseNotifier interface {
	// NotifyRelease arranges for a non-blocking send on ch each time a
	// lease on name is released. Expiry is not announced: waiters still
	// need a fallback poll. stop cancels the registration; it is safe to
	// call more than once. A provider runs its listener only while at
	// least one registration exists, so no goroutine outlives the last
	// stop.
	NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error)
}

// Inspector is implemented by providers that can report lease state, for
// operators and for the scheduler's catch-up.
type Inspector interface {
	// Inspect returns the state of one name. A name never acquired (or
	// whose record was removed) returns a batontype.LeaseInfo with Exists false and
	// a nil error.
	Inspect(ctx context.Context, name string) (batontype.LeaseInfo, error)
	// List returns the state of every name the provider knows.
	List(ctx context.Context) ([]batontype.LeaseInfo, error)
}

// MinHold returns atLeast if it lies after granted, else zero: how the
// providers report a lease's batontype.LeaseInfo.AtLeastUntil, whose stored form
// of "no minimum hold" is the grant time itself.
func MinHold(granted, atLeast time.Time) time.Time {
	if atLeast.After(granted) {
		return atLeast
	}
	return time.Time{}
}
