package redisfence

import "github.com/baton-go/baton/fence/internal/fencing"

// The checks every fenced write makes, shared with package fence.
var (
	invalid    = fencing.Invalid
	checkToken = fencing.CheckToken
	checkLease = fencing.CheckLease
	checkCall  = fencing.CheckCall
	stale      = fencing.Stale
)
