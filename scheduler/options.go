package scheduler

import (
	"strconv"
	"sync/atomic"
	"time"
)

// Per-job run-time options (the Builder's Retry, Jitter and Timeout) and
// the state that control of a job at run time keeps.

// jobOptions are the Builder's Retry, Jitter and Timeout.
type jobOptions struct {
	retries         int
	backoff, jitter time.Duration
	timeout         time.Duration
	err             error // the first invalid option
}

// jobControl is a job's control options and state.
type jobControl struct {
	jobOptions
	paused  atomic.Bool // Job.Pause on this instance
	removed atomic.Bool // Scheduler.Remove
}

// control is a run's control facts, for the ledger and the hooks.
type control struct {
	granted time.Time // manual runs: this instance's clock before the granting acquire
	manual  bool      // a manual run
	handoff bool      // a tick claimed after a manual run that held the lease at the tick
	note    string    // the ledger's text for a run that succeeded after retries
}

// atLeastFor is the minimum hold of the run's lease: none for manual runs,
// which have no tick for late replicas to run again.
func (c control) atLeastFor(j *Job) time.Duration {
	if c.manual {
		return 0
	}
	return j.opts.atLeastFor
}

func (o *jobOptions) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// check reports the first invalid option and copies the options to j.
func (o *jobOptions) check(b *Builder, j *Job) error {
	if o.err != nil {
		return withJob(b.name, o.err)
	}
	if o.timeout > 0 && b.locked {
		return invalid(b.name, "Timeout", o.timeout.String(), "applies to jobs without Locked; a locked job ends at its AtMostFor", ErrInvalidOption, nil)
	}
	j.ctl.jobOptions = *o
	return nil
}

// options lists the options for the registry.
func (o *jobOptions) options() []string {
	var out []string
	if o.retries > 0 {
		out = append(out, "retry="+strconv.Itoa(o.retries)+"/"+o.backoff.String())
	}
	if o.jitter > 0 {
		out = append(out, "jitter="+o.jitter.String())
	}
	if o.timeout > 0 {
		out = append(out, "timeout="+o.timeout.String())
	}
	return out
}
