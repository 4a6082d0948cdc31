package scheduler

import (
	"encoding/binary"
	"hash/fnv"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/scheduler/internal/schedule"
)

// Jitter: a per-job, per-tick delay of scheduled runs, the same on every
// replica.

// Jitter delays every scheduled run of the job by an amount in [0, d)
// derived from the job's name and the tick: the same on every replica, so
// they still contend for the same tick, and different across jobs, so
// jobs due at the same instant spread their starts. The run's Tick stays
// the scheduled time. Manual and catch-up runs are not delayed. d must be
// positive and, for Every schedules, shorter than the period. For cron
// schedules it is not checked: keep it shorter than the shortest gap
// between ticks. Otherwise a tick's delayed claim may come after the next
// tick's claim (whose delay was shorter), and that earlier tick is then
// skipped with ErrStaleTick on every replica: it does not run.
func (b *Builder) Jitter(d time.Duration) *Builder {
	limit := batontype.MaxDuration
	if e, ok := b.sched.(schedule.Every); ok {
		limit = e.Period - 1
	}
	if d <= 0 || d > limit {
		b.ctl.fail(invalid(b.name, "Jitter", d.String(), "must be positive and at most "+limit.String(), ErrInvalidDuration, nil))
		return b
	}
	b.ctl.jitter = d
	return b
}

// JitterOf returns the delay Jitter(max) gives the run of job for tick:
// FNV-1a of the name and the tick's Unix nanoseconds, modulo max; 0 when
// max is not positive.
func JitterOf(job string, tick time.Time, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(job))
	_, _ = h.Write(binary.BigEndian.AppendUint64(nil, uint64(tick.UnixNano())))
	return time.Duration(h.Sum64() % uint64(max))
}
