package jobstate

import (
	"time"

	"github.com/baton-go/baton/scheduler/internal/schedule"
)

// Schedule is a job's schedule as read back from the job registry, for
// tools outside the process that computes it.
type Schedule interface {
	// Next returns the first tick strictly after t, or the zero time.
	Next(t time.Time) time.Time
	// Prev returns the last tick at or before t, or the zero time.
	Prev(t time.Time) time.Time
	String() string
}

// ParseSchedule parses a registered schedule (batontype.JobSpec's
// Schedule and TimeZone): a cron spec as scheduler.Scheduler.Cron takes
// it, or "@every <d>" optionally followed by " offset <d>" for Every. An
// empty tz means UTC. Errors are *scheduler.SpecError values.
func ParseSchedule(spec, tz string) (Schedule, error) {
	s, err := schedule.Parse(spec, tz)
	if err != nil {
		return nil, err
	}
	return s, nil
}
