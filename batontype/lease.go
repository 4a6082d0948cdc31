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
