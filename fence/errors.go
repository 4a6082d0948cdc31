package fence

import (
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence/internal/fencing"
)

// Outcomes of a fenced write, the same values for every target (Resource,
// Value, package pgfence and package redisfence).
var (
	// ErrStaleToken means the resource has already seen a larger fencing
	// token: the lock passed to another holder, and this write was refused.
	ErrStaleToken = fencing.ErrStaleToken
	// ErrNotFound means the guarded row (or Redis key, for Get) does not
	// exist, so nothing was written.
	ErrNotFound = fencing.ErrNotFound
	// ErrConflict means the row changed concurrently in a way that hid the
	// outcome (it was deleted, re-created or re-keyed while the statement
	// ran); nothing was written, and a retry decides.
	ErrConflict = fencing.ErrConflict
)

// Bad input. Each is wrapped by a *ValidationError naming the field; all
// match ErrInvalid with errors.Is.
var (
	ErrInvalid      = batontype.ErrInvalid
	ErrInvalidToken = fencing.ErrInvalidToken
)

// ValidationError reports which input was rejected and why.
type ValidationError = batontype.ValidationError

// Shared with the backend packages, under the names this package's code
// has always used.
var (
	checkToken = fencing.CheckToken
	checkLease = fencing.CheckLease
	stale      = fencing.Stale
)
