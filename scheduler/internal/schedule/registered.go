package schedule

import (
	"errors"
	"strings"
	"time"
)

// Parse parses a registered schedule (batontype.JobSpec's Schedule and
// TimeZone): a cron spec as ParseCron takes it, or "@every <d>"
// optionally followed by " offset <d>" for Every. An empty tz means UTC.
func Parse(spec, tz string) (Schedule, error) {
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return nil, specErr(spec, "time zone", 0, tz, "is not a known time zone", err)
		}
		loc = l
	}
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		if p, off, ok := strings.Cut(rest, " offset "); ok {
			period, err1 := time.ParseDuration(p)
			offset, err2 := time.ParseDuration(off)
			if err := errors.Join(err1, err2); err != nil || period < MinPeriod || offset < 0 || offset >= period {
				return nil, specErr(spec, "@every", 1, rest, "is not a period and an offset within it", err)
			}
			return Every{Period: period, Offset: offset}, nil
		}
	}
	return ParseCron(spec, loc)
}

// Registered returns s in Parse's syntax.
func Registered(s Schedule) string {
	if e, ok := s.(Every); ok {
		if e.Offset == 0 {
			return "@every " + e.Period.String()
		}
		return "@every " + e.Period.String() + " offset " + e.Offset.String()
	}
	return s.String()
}

// IsCron reports whether s is a cron schedule, whose ticks depend on a
// time zone.
func IsCron(s Schedule) bool {
	_, ok := s.(cronSchedule)
	return ok
}
