package fence

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
)

var (
	// ErrStaleToken means the resource has already seen a larger fencing
	// token: the lock passed to another holder, and this write was refused.
	ErrStaleToken = errors.New("fence: stale fencing token")
	// ErrNotFound means the guarded row (or Redis key, for Get) does not
	// exist, so nothing was written.
	ErrNotFound = errors.New("fence: no such row")
	// ErrConflict means the row changed concurrently in a way that hid the
	// outcome (it was deleted, re-created or re-keyed while the statement
	// ran); nothing was written, and a retry decides.
	ErrConflict = errors.New("fence: row changed concurrently")
)

// Bad input. Each is wrapped by a *ValidationError naming the field; all
// match ErrInvalid with errors.Is.
var (
	ErrInvalid           = lockprovider.ErrInvalid
	ErrInvalidIdentifier = fmt.Errorf("%w: SQL identifier", lockprovider.ErrInvalid)
	ErrInvalidToken      = fmt.Errorf("%w: fencing token", lockprovider.ErrInvalid)
	ErrInvalidSQL        = fmt.Errorf("%w: SQL fragment", lockprovider.ErrInvalid)
)

// ValidationError reports which input was rejected and why.
type ValidationError = lockprovider.ValidationError

func invalid(field, value, reason string, sentinel error) error {
	if len(value) > 60 {
		value = value[:60] + "…"
	}
	return &ValidationError{Field: field, Value: fmt.Sprintf("%q", value), Reason: reason, Err: sentinel}
}

func checkToken(token int64) error {
	if token <= 0 {
		return invalid("token", fmt.Sprint(token), "must be positive (a lock's fencing token)", ErrInvalidToken)
	}
	return nil
}

// checkLease refuses a write when ctx carries a lock (the Context of a
// baton.Lock, a scheduled job's context) whose trust window has passed, so
// that a holder that was paused learns it before its write reaches the
// resource, even if the lock's timer has not run yet. A ctx without a lock
// passes.
func checkLease(ctx context.Context) error {
	if err := lease.Check(ctx); err != nil {
		return fmt.Errorf("fence: write refused: %w", err)
	}
	return nil
}

func stale(token, last int64) error {
	return fmt.Errorf("%w: token %d, resource has seen %d", ErrStaleToken, token, last)
}
