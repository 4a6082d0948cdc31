package schedule

import (
	"fmt"
	"strconv"

	"github.com/baton-go/baton/batontype"
)

// ErrInvalidSpec is scheduler.ErrInvalidSpec: every *SpecError matches it
// and batontype.ErrInvalid.
var ErrInvalidSpec = fmt.Errorf("%w: schedule", batontype.ErrInvalid)

// SpecError is scheduler.SpecError, defined here because the parser
// returns it; scheduler documents it.
type SpecError struct {
	Spec     string // the whole spec as given
	Field    string // "minute", "hour", "day of month", "month", "day of week", "second", "CRON_TZ", "TZ", "@every", "descriptor", "time zone"; empty if the spec as a whole is wrong
	Position int    // 1-based position of the field among the schedule fields, or 0
	Value    string // the offending text
	Reason   string
	Err      error // the parser's error, or nil
}

// Limits on echoed input in error texts, as in batontype.ValidationError.
const (
	maxEcho   = 64
	maxReason = 256
)

func (e *SpecError) Error() string {
	s := "scheduler: cron spec " + batontype.Shorten(strconv.Quote(e.Spec), maxEcho) + ": "
	value := batontype.Shorten(strconv.Quote(e.Value), maxEcho)
	switch {
	case e.Field != "" && e.Position > 0:
		s += fmt.Sprintf("field %d (%s) %s ", e.Position, e.Field, value)
	case e.Field != "":
		s += fmt.Sprintf("%s %s ", e.Field, value)
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + batontype.Shorten(e.Err.Error(), maxReason)
	}
	return s
}

// Unwrap returns ErrInvalidSpec and the parser's error, if any.
func (e *SpecError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidSpec, e.Err}
	}
	return []error{ErrInvalidSpec}
}

func specErr(spec, field string, pos int, value, reason string, err error) *SpecError {
	return &SpecError{Spec: spec, Field: field, Position: pos, Value: value, Reason: reason, Err: err}
}
