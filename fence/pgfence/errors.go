package pgfence

import (
	"fmt"

	"github.com/baton-go/baton/fence/internal/fencing"
	"github.com/baton-go/baton/lockprovider"
)

// Bad SQL input. Each is wrapped by a *fence.ValidationError naming the
// field; both match fence.ErrInvalid with errors.Is.
var (
	ErrInvalidIdentifier = fmt.Errorf("%w: SQL identifier", lockprovider.ErrInvalid)
	ErrInvalidSQL        = fmt.Errorf("%w: SQL fragment", lockprovider.ErrInvalid)
)

// The checks every fenced write makes, shared with package fence.
var (
	invalid    = fencing.Invalid
	checkToken = fencing.CheckToken
	checkLease = fencing.CheckLease
	checkCall  = fencing.CheckCall
	stale      = fencing.Stale
)
