// Package fencing holds what package fence and its backend packages
// (pgfence, redisfence) share: the outcome and validation errors, and the
// token checks every fenced write makes. Package fence re-exports the
// errors; they are defined here so that the backend packages need not
// import each other's drivers.
package fencing

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
)

// Outcomes of a fenced write; see package fence for their meaning.
var (
	ErrStaleToken = errors.New("fence: stale fencing token")
	ErrNotFound   = errors.New("fence: no such row")
	ErrConflict   = errors.New("fence: row changed concurrently")
)

// ErrInvalidToken is the validation error of a non-positive token.
var ErrInvalidToken = fmt.Errorf("%w: fencing token", batontype.ErrInvalid)

// maxEcho is how much of a rejected value an error repeats.
const maxEcho = 60

// Invalid returns a *batontype.ValidationError for field, quoting value
// shortened to maxEcho bytes.
func Invalid(field, value, reason string, sentinel error) error {
	if len(value) > maxEcho {
		value = value[:maxEcho] + "…"
	}
	return &batontype.ValidationError{Pkg: "fence", Field: field, Value: strconv.Quote(value), Reason: reason, Err: sentinel}
}

// CheckToken refuses a token that no grant hands out (tokens start at 1).
func CheckToken(token int64) error {
	if token <= 0 {
		return Invalid("token", strconv.FormatInt(token, 10), "must be positive (a lock's fencing token)", ErrInvalidToken)
	}
	return nil
}

// CheckCall refuses what would make a backend guard's call panic in its
// driver: a nil ctx, or a guard not made by its constructor (zero or nil).
func CheckCall(ctx context.Context, ready bool) error {
	if !ready {
		return Invalid("guard", "<zero>", "must be made by NewGuard", batontype.ErrInvalid)
	}
	if ctx == nil {
		return Invalid("ctx", "<nil>", "must not be nil (use context.Background)", batontype.ErrInvalid)
	}
	return nil
}

// Stale is the error of a write refused because the resource has seen
// last, a larger token.
func Stale(token, last int64) error {
	return fmt.Errorf("%w: token %d, resource has seen %d", ErrStaleToken, token, last)
}

// CheckLease refuses a write when ctx carries a lock (the Context of a
// baton.Lock, a scheduled job's context, or one derived from them) whose
// trust window has passed, so that a holder that was paused learns it
// before its write reaches the resource, even if the lock's timer has not
// run yet. A ctx without a lock passes.
func CheckLease(ctx context.Context) error {
	if err := lease.Check(ctx); err != nil {
		return fmt.Errorf("fence: write refused: %w", err)
	}
	return nil
}
