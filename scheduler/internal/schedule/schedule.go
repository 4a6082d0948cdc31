package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule yields the fire times (ticks) of a job. Implementations are
// immutable and safe for concurrent use.
type Schedule interface {
	// Next returns the first tick strictly after t, or the zero time if
	// there is none.
	Next(t time.Time) time.Time
	// Prev returns the last tick at or before t, or the zero time if none
	// is found.
	Prev(t time.Time) time.Time
	String() string
}

// MinPeriod is the shortest Every period: the providers' tick resolution.
const MinPeriod = time.Millisecond

// Every ticks at epoch + Offset + k*Period: every replica computes the same
// ticks whatever its start time, which is what tick identity needs.
type Every struct {
	Period, Offset time.Duration
}

func (e Every) Next(t time.Time) time.Time {
	return e.Prev(t).Add(e.Period)
}

func (e Every) Prev(t time.Time) time.Time {
	// Work in nanoseconds since the epoch; int64 covers years 1678-2262.
	ns := t.UnixNano() - int64(e.Offset)
	p := int64(e.Period)
	k := ns / p
	if ns%p < 0 {
		k-- // floor for times before epoch+offset
	}
	return time.Unix(0, k*p+int64(e.Offset)).In(t.Location())
}

func (e Every) String() string {
	if e.Offset == 0 {
		return "every " + e.Period.String()
	}
	return fmt.Sprintf("every %s offset %s", e.Period, e.Offset)
}

// cronSchedule is a parsed cron spec with its time zone fixed.
type cronSchedule struct {
	spec  string
	sched *cron.SpecSchedule
}

func (c cronSchedule) Next(t time.Time) time.Time { return c.sched.Next(t) }

// Prev searches backwards because cron schedules only know "next": it
// walks forward from ever earlier starting points until a tick at or
// before t is found. The window starts at about one period and grows
// fourfold, so a regular schedule needs a handful of next calls.
func (c cronSchedule) Prev(t time.Time) time.Time {
	n1 := c.sched.Next(t)
	if n1.IsZero() {
		return time.Time{}
	}
	window := c.sched.Next(n1).Sub(n1)
	if window < time.Second {
		window = time.Second
	}
	const horizon = 5 * 366 * 24 * time.Hour // cron.SpecSchedule gives up after five years too
	for steps := 0; window <= 4*horizon; window *= 4 {
		var last time.Time
		for x := c.sched.Next(t.Add(-window)); !x.IsZero() && !x.After(t); x = c.sched.Next(x) {
			last = x
			if steps++; steps > 100_000 {
				return last // pathological schedule; the newest found is good enough
			}
		}
		if !last.IsZero() {
			return last
		}
	}
	return time.Time{}
}

func (c cronSchedule) String() string { return c.spec }

// Field names of a cron spec, by position, for error messages.
var (
	fields5 = []string{"minute", "hour", "day of month", "month", "day of week"}
	fields6 = []string{"second", "minute", "hour", "day of month", "month", "day of week"}
)

// fieldParsers validate a single field by placing it in a spec whose other
// fields are "*" (6-field form, seconds first).
var sixFields = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseCron parses spec into a schedule in loc (or the spec's own CRON_TZ=
// or TZ= zone). It accepts 5 fields, 6 fields with seconds first, the
// descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly, and "@every <duration>", which ticks like Every.
func ParseCron(spec string, loc *time.Location) (Schedule, error) {
	rest := strings.TrimSpace(spec)
	if rest == "" {
		return nil, specErr(spec, "", 0, "", "is empty", nil)
	}
	if strings.HasPrefix(rest, "TZ=") || strings.HasPrefix(rest, "CRON_TZ=") {
		// Parsed here rather than by cron: cron.Parser panics on a TZ=
		// prefix that is not followed by a space.
		eq := strings.IndexByte(rest, '=')
		tz, after, _ := strings.Cut(rest[eq+1:], " ")
		tzField := rest[:eq]
		if tz == "" {
			return nil, specErr(spec, tzField, 0, tz, "names no time zone", nil)
		}
		l, err := time.LoadLocation(tz)
		if err != nil {
			return nil, specErr(spec, tzField, 0, tz, "is not a known time zone", err)
		}
		loc = l
		rest = strings.TrimSpace(after)
		if rest == "" {
			return nil, specErr(spec, "", 0, "", "has a time zone but no schedule", nil)
		}
	}
	if strings.HasPrefix(rest, "@") {
		return parseDescriptor(spec, rest, loc)
	}
	fields := strings.Fields(rest)
	var names []string
	switch len(fields) {
	case 5:
		names = fields5
		fields = append([]string{"0"}, fields...)
	case 6:
		names = fields6
	default:
		return nil, specErr(spec, "", 0, rest,
			fmt.Sprintf("has %d fields; want 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)", len(fields)), nil)
	}
	s, err := sixFields.Parse(strings.Join(fields, " "))
	if err != nil {
		// Find the offending field: cron's message names the value but not
		// the field.
		off := len(fields) - len(names)
		for i, f := range fields[off:] {
			probe := []string{"*", "*", "*", "*", "*", "*"}
			probe[off+i] = f
			if _, ferr := sixFields.Parse(strings.Join(probe, " ")); ferr != nil {
				return nil, specErr(spec, names[i], i+1, f, "is invalid", ferr)
			}
		}
		return nil, specErr(spec, "", 0, rest, "is invalid", err)
	}
	ss := s.(*cron.SpecSchedule)
	ss.Location = loc
	cs := cronSchedule{spec: spec, sched: ss}
	if cs.Next(time.Now()).IsZero() {
		return nil, specErr(spec, "", 0, rest, "never fires (no matching time within five years)", nil)
	}
	return cs, nil
}

func parseDescriptor(spec, d string, loc *time.Location) (Schedule, error) {
	if arg, ok := strings.CutPrefix(d, "@every"); ok {
		arg = strings.TrimSpace(arg)
		p, err := time.ParseDuration(arg)
		if err != nil {
			return nil, specErr(spec, "@every", 1, arg, "is not a duration", err)
		}
		if p < MinPeriod {
			return nil, specErr(spec, "@every", 1, arg, "must be at least "+MinPeriod.String(), nil)
		}
		return Every{Period: p}, nil
	}
	s, err := cron.NewParser(cron.Descriptor).Parse(d)
	if err != nil {
		return nil, specErr(spec, "descriptor", 0, d,
			"is not one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every <duration>", err)
	}
	ss := s.(*cron.SpecSchedule)
	ss.Location = loc
	return cronSchedule{spec: spec, sched: ss}, nil
}
