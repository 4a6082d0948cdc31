package shedlock

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
)

// ErrInvalidDuration is matched (errors.Is) by every error of ParseDuration.
// It also matches batontype.ErrInvalid.
var ErrInvalidDuration = batontype.ErrInvalidDuration

// durationError is the error of ParseDuration: the module's one validation
// error type.
func durationError(input, reason string) error {
	return &batontype.ValidationError{Pkg: "shedlock", Field: "duration", Value: strconv.Quote(input), Reason: reason, Err: ErrInvalidDuration}
}

// The two forms Spring (and so ShedLock's annotations) accept: ISO-8601
// seconds-based durations, case-insensitive, with days as 24 hours and an
// optional sign on the whole and on each part; and "<integer><unit>" with
// unit ns, us, ms, s, m, h, d (any case) or none for milliseconds.
var (
	isoRE    = regexp.MustCompile(`(?i)^([+-]?)P(?:([+-]?[0-9]+)D)?(T(?:([+-]?[0-9]+)H)?(?:([+-]?[0-9]+)M)?(?:([+-]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)
	simpleRE = regexp.MustCompile(`^([+-]?[0-9]+)([a-zA-Z]{0,2})$`)
)

var simpleUnits = map[string]time.Duration{
	"ns": time.Nanosecond,
	"us": time.Microsecond,
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
	"d":  24 * time.Hour,
	"":   time.Millisecond,
}

// ParseDuration reads a duration the way ShedLock's Spring integration reads
// lockAtMostFor and lockAtLeastFor: "PT30S", "PT10M", "P1D", "P2DT3H4M",
// "PT0.5S", as well as "30s", "10m", "500ms", "1d" and a bare "30000"
// (milliseconds). Like ShedLock's annotation parser it rejects negative
// results. A year, month or week part ("P1Y", "P1W") is not a duration
// there either, and is rejected. Every error is a
// *batontype.ValidationError matching ErrInvalidDuration.
func ParseDuration(s string) (time.Duration, error) {
	d, err := parse(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, durationError(s, "must not be negative")
	}
	return d, nil
}

func parse(s string) (time.Duration, error) {
	if m := isoRE.FindStringSubmatch(s); m != nil {
		return parseISO(s, m)
	}
	if u := strings.ToUpper(strings.TrimLeft(s, "+-")); strings.HasPrefix(u, "P") {
		return 0, durationError(s, "is not an ISO-8601 duration of days, hours, minutes and seconds (PnDTnHnMn.nS)")
	}
	m := simpleRE.FindStringSubmatch(s)
	if m == nil {
		return 0, durationError(s, `is neither ISO-8601 ("PT30S") nor a number with a unit ("30s")`)
	}
	unit, ok := simpleUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, durationError(s, fmt.Sprintf("unknown unit %q (want ns, us, ms, s, m, h, d or none for milliseconds)", m[2]))
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, durationError(s, "number out of range")
	}
	return mul(s, n, unit)
}

// parseISO sums the parts exactly (big integers of nanoseconds), so an
// overflow is an error rather than a wrapped value.
func parseISO(s string, m []string) (time.Duration, error) {
	// m[3] is the "T" group: a bare "PT" or "P" has no part at all.
	if m[2] == "" && m[4] == "" && m[5] == "" && m[6] == "" {
		return 0, durationError(s, "has no day, hour, minute or second part")
	}
	total := new(big.Int)
	add := func(v string, unit time.Duration) error {
		if v == "" {
			return nil
		}
		n, ok := new(big.Int).SetString(strings.TrimPrefix(v, "+"), 10)
		if !ok {
			return durationError(s, "bad number "+strconv.Quote(v))
		}
		total.Add(total, n.Mul(n, big.NewInt(int64(unit))))
		return nil
	}
	for _, p := range []struct {
		v    string
		unit time.Duration
	}{{m[2], 24 * time.Hour}, {m[4], time.Hour}, {m[5], time.Minute}, {m[6], time.Second}} {
		if err := add(p.v, p.unit); err != nil {
			return 0, err
		}
	}
	if frac := m[7]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		f := big.NewInt(ns)
		if strings.HasPrefix(m[6], "-") {
			f.Neg(f)
		}
		total.Add(total, f)
	}
	if m[1] == "-" {
		total.Neg(total)
	}
	if !total.IsInt64() {
		return 0, durationError(s, "out of range (about ±292 years)")
	}
	return time.Duration(total.Int64()), nil
}

func mul(s string, n int64, unit time.Duration) (time.Duration, error) {
	if n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit) {
		return 0, durationError(s, "out of range (about ±292 years)")
	}
	return time.Duration(n) * unit, nil
}

// SchedulerLock is the triple of ShedLock's @SchedulerLock annotation, with
// the strings as they appear in the annotation or in the Spring properties
// it refers to. An empty duration means "the default", as in ShedLock:
// scheduler.Config's AtMostFor / AtLeastFor (the
// counterparts of @EnableSchedulerLock's defaults) then apply.
type SchedulerLock struct {
	Name           string
	LockAtMostFor  string
	LockAtLeastFor string
}

// Lock is a parsed SchedulerLock: the lock name and the bounds the
// annotation gives. It implements scheduler.LockBounds, so a job shares
// its lock with the Java job annotated the same way:
//
//	l, err := shedlock.SchedulerLock{Name: "report", LockAtMostFor: "PT14M"}.Parse()
//	job, err := sched.Cron("0 */15 * * * *").Locked(l.Name, scheduler.Bounds(l)).Do(report)
type Lock struct {
	Name          string
	AtMostFor     time.Duration // the annotation's bound, when HasAtMostFor
	AtLeastFor    time.Duration // the annotation's bound, when HasAtLeastFor
	HasAtMostFor  bool
	HasAtLeastFor bool
}

// LockBounds reports the bounds l gives; see scheduler.LockBounds.
func (l Lock) LockBounds() (atMostFor time.Duration, atMostOK bool, atLeastFor time.Duration, atLeastOK bool) {
	return l.AtMostFor, l.HasAtMostFor, l.AtLeastFor, l.HasAtLeastFor
}

// Parse reads the annotation's durations. It returns an error matching
// batontype.ErrInvalid for an invalid name or duration, or an at-least
// bound above the at-most one.
func (l SchedulerLock) Parse() (Lock, error) {
	if err := batontype.ValidateName(l.Name); err != nil {
		return Lock{}, err
	}
	// parse reads one attribute; its errors name the job and the attribute.
	parse := func(field, v string) (time.Duration, error) {
		d, err := ParseDuration(v)
		var ve *batontype.ValidationError
		if errors.As(err, &ve) {
			ve.Job, ve.Field = l.Name, field
		}
		return d, err
	}
	out := Lock{Name: l.Name}
	if l.LockAtMostFor != "" {
		d, err := parse("lockAtMostFor", l.LockAtMostFor)
		if err != nil {
			return Lock{}, err
		}
		out.AtMostFor, out.HasAtMostFor = d, true
	}
	if l.LockAtLeastFor != "" {
		d, err := parse("lockAtLeastFor", l.LockAtLeastFor)
		if err != nil {
			return Lock{}, err
		}
		out.AtLeastFor, out.HasAtLeastFor = d, true
	}
	// Check what is given; a missing bound is the scheduler's default.
	var err error
	switch {
	case out.HasAtMostFor && out.HasAtLeastFor:
		err = batontype.ValidateDurations(out.AtMostFor, out.AtLeastFor)
	case out.HasAtMostFor:
		err = batontype.ValidateDurations(out.AtMostFor, 0)
	case out.HasAtLeastFor:
		err = batontype.ValidateDurations(batontype.MaxDuration, out.AtLeastFor)
	}
	var ve *batontype.ValidationError
	if errors.As(err, &ve) {
		ve.Job = l.Name
	}
	if err != nil {
		return Lock{}, err
	}
	return out, nil
}
