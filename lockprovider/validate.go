package lockprovider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/baton-go/baton/batontype"
)

// NewOwner returns a fresh owner token: 128 random bits, hex-encoded.
func NewOwner() string {
	var b [16]byte
	// crypto/rand.Read never returns an error since Go 1.24; it aborts the
	// program if the system's source fails.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CheckContext returns batontype.ErrNilContext for a nil ctx and nil
// otherwise. Providers call it first in every method that takes a
// context.
func CheckContext(ctx context.Context) error {
	if ctx == nil {
		return batontype.ErrNilContext
	}
	return nil
}

// ValidateWatch checks the channel given to NotifyRelease or WatchControl.
func ValidateWatch(ch chan<- struct{}) error {
	if ch == nil {
		return &batontype.ValidationError{Field: "ch", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	return nil
}

// Validate checks every field of p.
func (p AcquireParams) Validate() error {
	if err := batontype.ValidateName(p.Name); err != nil {
		return err
	}
	if err := batontype.ValidateOwner(p.Owner); err != nil {
		return err
	}
	if err := validateLockedBy(p.LockedBy); err != nil {
		return err
	}
	if !p.Tick.IsZero() && p.Tick.Unix() <= 0 {
		return batontype.Invalid("Tick", p.Tick.String(), "must be after the Unix epoch", batontype.ErrInvalid)
	}
	return batontype.ValidateDurations(p.AtMostFor, p.AtLeastFor)
}

// Validate checks every field of p.
func (p ExtendParams) Validate() error {
	if err := batontype.ValidateName(p.Name); err != nil {
		return err
	}
	if err := batontype.ValidateOwner(p.Owner); err != nil {
		return err
	}
	return batontype.ValidateDurations(p.AtMostFor, p.AtLeastFor)
}

// Validate checks every field of p.
func (p ReleaseParams) Validate() error {
	if err := batontype.ValidateName(p.Name); err != nil {
		return err
	}
	return batontype.ValidateOwner(p.Owner)
}

// Validate checks every field of p.
func (p ForceReleaseParams) Validate() error {
	if err := batontype.ValidateName(p.Name); err != nil {
		return err
	}
	if p.Token < 0 {
		return batontype.Invalid("Token", strconv.FormatInt(p.Token, 10), "must be 0 (any lease) or a fencing token", batontype.ErrInvalid)
	}
	if err := validateLockedBy(p.By); err != nil {
		// The rules of LockedBy, reported for the field the caller set.
		var ve *batontype.ValidationError
		if errors.As(err, &ve) {
			ve.Field = "By"
		}
		return err
	}
	return nil
}

// validateLockedBy checks an optional LockedBy.
func validateLockedBy(lockedBy string) error {
	if lockedBy == "" {
		return nil
	}
	return batontype.ValidateLockedBy(lockedBy)
}
