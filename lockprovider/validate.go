package lockprovider

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on inputs, shared by every provider so that a name valid on one
// backend is valid on all.
const (
	MaxNameLen     = 200              // bytes
	MaxOwnerLen    = 64               // bytes
	MaxLockedByLen = 255              // bytes
	MinDuration    = time.Millisecond // Redis PX resolution
	MaxDuration    = 366 * 24 * time.Hour
)

// NewOwner returns a fresh owner token: 128 random bits, hex-encoded.
func NewOwner() string {
	var b [16]byte
	// crypto/rand.Read never returns an error since Go 1.24; it aborts the
	// program if the system's source fails.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidateName checks a lock name: 1 to MaxNameLen bytes of valid UTF-8
// without control characters.
func ValidateName(name string) error {
	return validateText("Name", name, MaxNameLen, ErrInvalidName, true)
}

func validateText(field, s string, max int, sentinel error, required bool) error {
	switch {
	case s == "" && required:
		return invalid(field, s, "must not be empty", sentinel)
	case len(s) > max:
		return invalid(field, s, fmt.Sprintf("is %d bytes, longer than %d", len(s), max), sentinel)
	case !utf8.ValidString(s):
		return invalid(field, s, "is not valid UTF-8", sentinel)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return invalid(field, s, fmt.Sprintf("contains control character %U", r), sentinel)
		}
	}
	return nil
}

// ValidateDurations checks a lease length and its minimum hold.
func ValidateDurations(atMostFor, atLeastFor time.Duration) error {
	switch {
	case atMostFor < MinDuration:
		return invalid("AtMostFor", atMostFor.String(), "must be at least "+MinDuration.String(), ErrInvalidDuration)
	case atMostFor > MaxDuration:
		return invalid("AtMostFor", atMostFor.String(), "must be at most "+MaxDuration.String(), ErrInvalidDuration)
	case atLeastFor < 0:
		return invalid("AtLeastFor", atLeastFor.String(), "must not be negative", ErrInvalidDuration)
	case atLeastFor > atMostFor:
		return invalid("AtLeastFor", atLeastFor.String(), "must not exceed AtMostFor "+atMostFor.String(), ErrInvalidDuration)
	}
	return nil
}

// Validate checks every field of p.
func (p AcquireParams) Validate() error {
	if err := ValidateName(p.Name); err != nil {
		return err
	}
	if err := validateText("Owner", p.Owner, MaxOwnerLen, ErrInvalidOwner, true); err != nil {
		return err
	}
	if err := validateText("LockedBy", p.LockedBy, MaxLockedByLen, ErrInvalid, false); err != nil {
		return err
	}
	if !p.Tick.IsZero() && p.Tick.Unix() <= 0 {
		return invalid("Tick", p.Tick.String(), "must be after the Unix epoch", ErrInvalid)
	}
	return ValidateDurations(p.AtMostFor, p.AtLeastFor)
}

// Validate checks every field of p.
func (p ExtendParams) Validate() error {
	if err := ValidateName(p.Name); err != nil {
		return err
	}
	if err := validateText("Owner", p.Owner, MaxOwnerLen, ErrInvalidOwner, true); err != nil {
		return err
	}
	return ValidateDurations(p.AtMostFor, p.AtLeastFor)
}

// Validate checks every field of p.
func (p ReleaseParams) Validate() error {
	if err := ValidateName(p.Name); err != nil {
		return err
	}
	return validateText("Owner", p.Owner, MaxOwnerLen, ErrInvalidOwner, true)
}

func invalid(field, value, reason string, sentinel error) error {
	return &ValidationError{Field: field, Value: strconv.Quote(Shorten(value, 40)), Reason: reason, Err: sentinel}
}
