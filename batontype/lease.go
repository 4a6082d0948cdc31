package batontype

import "time"

// LeaseInfo is the state of a lock name as an operator sees it.
type LeaseInfo struct {
	Name      string
	Exists    bool      // the provider has a record of the name
	Held      bool      // a lease is in force now (server time)
	LockedBy  string    // informational holder of the current or last lease
	GrantedAt time.Time // grant time of the current or last lease
	Until     time.Time // expiry of the current or last lease
	Token     int64     // fencing token of the current or last lease
	LastTick  time.Time // newest tick granted, or zero
	// AtLeastUntil is the end of the current or last lease's minimum hold
	// (AtLeastFor): a release before it keeps the lease held until then.
	// Zero for a lease without one, and from providers that do not store
	// it (the ShedLock-compatible ones; etcd once the bound has passed).
	// Providers that offer admin actions report it.
	AtLeastUntil time.Time
}

// Lease is a grant of a lock name to one owner, as a provider returns it
// and a held lock reports it. Times are the backend's.
type Lease struct {
	Name  string
	Owner string
	Token int64 // fencing token; strictly increasing per name

	GrantedAt    time.Time // when the backend granted this lease
	Until        time.Time // when it expires unless extended or released
	AtLeastUntil time.Time // a release before this instant keeps it held until then
	Tick         time.Time // the tick it was granted for, or zero
}
