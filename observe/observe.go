package observe

import (
	"context"
	"time"
)

// Observer receives the events of a Locker, a Scheduler and a rate
// Limiter. One Observer may serve all three at once, from many goroutines:
// Observe must be safe for concurrent use, quick and non-blocking, since it
// runs on the goroutine that does the work.
//
// Observe returns the context the caller carries on with. For a begin
// event (see Kind.Begins) it may return a context derived from ctx, e.g.
// one carrying a trace span: the work that follows runs under it and the
// matching end event is reported with it. For every other event it returns
// ctx itself; callers ignore what it returns.
type Observer interface {
	Observe(ctx context.Context, e Event) context.Context
}

// Func adapts a function to an Observer that returns ctx unchanged, for
// observers that count or log and never derive a context.
type Func func(ctx context.Context, e Event)

// Observe calls f and returns ctx.
func (f Func) Observe(ctx context.Context, e Event) context.Context {
	f(ctx, e)
	return ctx
}

// Event is one thing that happened. Kind says what; the other fields are
// filled as that Kind's documentation says and are zero otherwise.
//
// An Event carries no rate-limit key: keys are data (addresses, user ids)
// that must stay out of metric labels and traces.
type Event struct {
	Kind Kind

	// Name is the lock name: the Locker's name, or a locked job's name.
	// Empty for jobs without a lock and for rate-limit events.
	Name string
	// Job is the scheduler job's name; empty for Locker and rate-limit
	// events.
	Job string
	// Tick is the scheduled time a job's event is about.
	Tick time.Time
	// Token is the fencing token of the lease, once granted.
	Token int64
	// CatchUp marks a run that catches up a tick no replica ran.
	CatchUp bool
	// Manual marks a manual run (scheduler.RunNow, or a run request);
	// its Tick is zero.
	Manual bool
	// Attempt numbers the calls of the job function within one run (1,
	// then 2, 3, ... for retries), on JobStarted and JobFinished.
	Attempt int

	// Start is when the reported operation began (the first call of an
	// acquire, the send of a round trip, the call of a job function),
	// and Duration how long it took: the wait of an acquire, the latency
	// of a claim, the run of a job, a round trip. Both are zero for
	// events that do not time anything.
	Start    time.Time
	Duration time.Duration

	// Outcome classifies the event with one of the Outcome constants; the
	// Kind's documentation lists which.
	Outcome string
	// Err is the error behind a refusal, failure or loss, or the reason
	// for a skip.
	Err error

	// LockedBy and Until name the holder of a lock this instance did not
	// get and the end of its lease (provider clock), when known.
	LockedBy string
	Until    time.Time

	// Policy names the rate limit that decided (the tightest one), or the
	// Limiter's limits joined by "," when no decision was made.
	Policy string
	// RetryAfter is how long a refused rate-limited request should wait.
	RetryAfter time.Duration
	// Cost is the units a rate-limited request asked for.
	Cost int64
}

// End returns Start + Duration: when the operation ended.
func (e Event) End() time.Time { return e.Start.Add(e.Duration) }
