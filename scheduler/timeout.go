package scheduler

import (
	"errors"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Timeouts of unlocked jobs.

// ErrTimeout is the cause of an unlocked job's context when its run
// outlived Builder.Timeout.
var ErrTimeout = errors.New("scheduler: run timed out")

// Timeout bounds each call of an unlocked job's function: its context is
// cancelled with cause ErrTimeout d after the call started. Locked jobs
// end at their AtMostFor instead, so Timeout with Locked is an
// ErrInvalidOption. d must be at least 1ms.
func (b *Builder) Timeout(d time.Duration) *Builder {
	if d < batontype.MinDuration || d > batontype.MaxDuration {
		b.ctl.fail(invalid(b.name, "Timeout", d.String(), "must be between "+batontype.MinDuration.String()+" and "+batontype.MaxDuration.String(), ErrInvalidDuration, nil))
		return b
	}
	b.ctl.timeout = d
	return b
}
