package defaults

import (
	"log/slog"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Duration returns def when d is zero, and d when it lies within [lo, hi]
// (hi zero: no upper bound). Otherwise it returns a
// *batontype.ValidationError on field, wrapping
// batontype.ErrInvalidDuration, that states reason.
func Duration(field string, d, def, lo, hi time.Duration, reason string) (time.Duration, error) {
	switch {
	case d == 0:
		return def, nil
	case d < lo || (hi != 0 && d > hi):
		return 0, &batontype.ValidationError{Field: field, Value: d.String(), Reason: reason, Err: batontype.ErrInvalidDuration}
	}
	return d, nil
}

// Bounds of a Config.RecordTTL, the same in every provider that has one.
const (
	MinRecordTTL = time.Hour
	MaxRecordTTL = 10 * batontype.MaxDuration
)

// RecordTTL is Duration for a Config.RecordTTL: how long the records of a
// lease (its fencing counter, its run) outlive it.
func RecordTTL(d, def time.Duration) (time.Duration, error) {
	return Duration("RecordTTL", d, def, MinRecordTTL, MaxRecordTTL, "must be between 1h and "+MaxRecordTTL.String())
}

// Logger returns l, or for nil a logger that discards everything.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Of returns *cfg, or for a nil cfg the zero value, whose every field means
// its documented default: the one reading of a config pointer argument.
func Of[T any](cfg *T) T {
	if cfg == nil {
		var zero T
		return zero
	}
	return *cfg
}
