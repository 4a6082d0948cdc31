package batontype

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on inputs, shared by every package and provider so that a name
// valid on one backend is valid on all.
const (
	MaxNameLen     = 200              // bytes of a lock, job or rate-limit key name
	MaxOwnerLen    = 64               // bytes of an owner token
	MaxLockedByLen = 255              // bytes of a holder's or instance's name
	MinDuration    = time.Millisecond // Redis PX resolution
	MaxDuration    = 366 * 24 * time.Hour
)

// ValidateName checks a lock or job name: 1 to MaxNameLen bytes of valid
// UTF-8 without control characters.
func ValidateName(name string) error {
	return validateText("Name", name, MaxNameLen, ErrInvalidName, true)
}

// ValidateKey checks a rate-limit key: the rules of ValidateName.
func ValidateKey(key string) error {
	return validateText("Key", key, MaxNameLen, ErrInvalidName, true)
}

// ValidateOwner checks an owner token: 1 to MaxOwnerLen bytes of valid
// UTF-8 without control characters.
func ValidateOwner(owner string) error {
	return validateText("Owner", owner, MaxOwnerLen, ErrInvalidOwner, true)
}

// ValidateLockedBy checks a holder's or instance's name: 1 to
// MaxLockedByLen bytes of valid UTF-8 without control characters. Where
// the name is optional, callers check only a non-empty one.
func ValidateLockedBy(lockedBy string) error {
	return validateText("LockedBy", lockedBy, MaxLockedByLen, ErrInvalid, true)
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

// Invalid returns a *ValidationError for field: value (shortened and
// quoted) is rejected for reason, matching sentinel.
func Invalid(field, value, reason string, sentinel error) *ValidationError {
	return &ValidationError{Field: field, Value: strconv.Quote(Shorten(value, 40)), Reason: reason, Err: sentinel}
}

func invalid(field, value, reason string, sentinel error) error {
	return Invalid(field, value, reason, sentinel)
}

// Shorten returns s cut to at most max bytes on a rune boundary, with "…"
// appended when it was cut. Error messages use it for echoed input.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// CutError bounds s to MaxRunError bytes at a rune boundary, ending a cut
// text with "…", and replaces control characters other than newline and
// tab, so every provider stores the same text.
func CutError(s string) string { return cutText(s, MaxRunError) }

// CutStack bounds a panicked run's stack to MaxRunStack bytes as CutError
// bounds an error text.
func CutStack(s string) string { return cutText(s, MaxRunStack) }

func cutText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	return Shorten(s, max-len("…"))
}
