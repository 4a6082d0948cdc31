package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Retries of a failed run within its tick and lease.

// Limits of the per-job options.
const (
	MaxRetries = 100 // Builder.Retry
)

// Retry calls the job function again, up to n more times, when it returns
// an error or panics, within the same run: the same tick, lease and
// fencing token. The first retry waits backoff, each later one twice the
// previous wait. For a locked job the lease is extended before each wait
// to cover the wait plus a full AtMostFor. Retries stop when the run's
// context ends (the lease was lost, Close, or Shutdown's deadline); a
// Shutdown waits for them like for any running job. 1 <= n <= MaxRetries;
// backoff may be zero.
func (b *Builder) Retry(n int, backoff time.Duration) *Builder {
	switch {
	case n < 1 || n > MaxRetries:
		b.ctl.fail(invalid(b.name, "Retry", strconv.Itoa(n), "must be between 1 and "+strconv.Itoa(MaxRetries), ErrInvalidOption, nil))
	case backoff < 0 || backoff > batontype.MaxDuration || n > 1 && backoff > batontype.MaxDuration>>(n-1):
		b.ctl.fail(invalid(b.name, "Retry", backoff.String(), "backoff must be non-negative and its last doubling at most "+batontype.MaxDuration.String(), ErrInvalidDuration, nil))
	default:
		b.ctl.retries, b.ctl.backoff = n, backoff
	}
	return b
}

// attempts calls the job function once, and again as Retry allows,
// reporting every call to the hooks, and leaves in res what the ledger
// records: the last error, marked with its attempt when there were
// several, or for a success after failures a note of them.
func (s *Scheduler) attempts(ctx context.Context, j *Job, run Run, ev Event, res *runResult) {
	max := 1 + j.ctl.retries
	wait := j.ctl.backoff
	var last error // of the previous attempt
	for k := 1; ; k++ {
		run.Attempt, ev.Attempt = k, k
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if j.ctl.timeout > 0 {
			cctx, cancel = context.WithTimeoutCause(ctx, j.ctl.timeout, ErrTimeout)
		}
		err := s.call(cctx, j, run, ev)
		cancel()
		switch {
		case err == nil && k > 1:
			res.note = fmt.Sprintf("succeeded at attempt %d of %d; attempt %d failed: %v", k, max, k-1, last)
			res.err = nil
			return
		case err == nil:
			return
		case max > 1:
			res.err = fmt.Errorf("attempt %d of %d: %w", k, max, err)
		default:
			res.err = err
		}
		last = err
		if k == max || ctx.Err() != nil || !s.retryWait(ctx, j, run, wait) {
			return
		}
		wait *= 2
	}
}

// retryWait extends a locked run's lease to cover wait and a full
// AtMostFor, then waits; it reports whether to try again.
func (s *Scheduler) retryWait(ctx context.Context, j *Job, run Run, wait time.Duration) bool {
	if run.lease != nil {
		d := min(wait+j.opts.atMostFor, batontype.MaxDuration)
		if err := run.lease.Extend(ctx, d); err != nil {
			s.cfg.Logger.WarnContext(s.runCtx, "scheduler: cannot extend the lease for a retry; giving up", "job", j.name, "tick", run.Tick, "err", err)
			return false
		}
	}
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
