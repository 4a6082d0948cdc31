package pgfence

import (
	"fmt"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence/internal/fencing"
)

// Bad SQL input. Each is wrapped by a *fence.ValidationError naming the
// field; both match fence.ErrInvalid with errors.Is.
var (
	ErrInvalidIdentifier = fmt.Errorf("%w: SQL identifier", batontype.ErrInvalid)
	ErrInvalidSQL        = fmt.Errorf("%w: SQL fragment", batontype.ErrInvalid)
)

// The checks every fenced write makes, shared with package fence.
var (
	invalid    = fencing.Invalid
	checkToken = fencing.CheckToken
	checkLease = fencing.CheckLease
	checkCall  = fencing.CheckCall
	stale      = fencing.Stale
)
