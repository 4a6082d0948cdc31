package observe

import "github.com/baton-go/baton/batontype"

// Kind says what an Event reports. New kinds may be added in later
// releases: an Observer ignores kinds it does not know.
type Kind uint8

// Kinds of the Locker (package baton) and of every lease, the scheduler's
// included. Name is set, and Tick for a scheduler run's lease.
const (
	_ Kind = iota

	// LockAttempt: one acquire call to the provider returned. Start and
	// Duration time the round trip. Outcome: OutcomeGranted,
	// OutcomeRefused, OutcomeUnavailable or OutcomeError; Err is set
	// unless granted.
	LockAttempt
	// LockAcquired: TryAcquire or Acquire returned a lock. Duration is the
	// wait from the call to the grant; Token is set; Outcome is
	// OutcomeGranted.
	LockAcquired
	// LockRefused: TryAcquire or Acquire returned an error. Duration is
	// the wait; Err the error; Outcome OutcomeRefused (held by another
	// owner), OutcomeCanceled (the context ended first),
	// OutcomeUnavailable, OutcomeInvalid or OutcomeError.
	LockRefused
	// LockExtended: an extension (Extend, Run.Extend or an auto-renewal)
	// returned. Start and Duration time the round trip. Outcome: OutcomeOK,
	// OutcomeNotHeld (the lease was gone) or OutcomeError.
	LockExtended
	// LockLost: a held lease was lost (its trust window ended, or an
	// extension found it gone). Err is the cause; Token is set. It is
	// reported just after the lease's context is cancelled (the holder is
	// stopped first), so it may come after what the holder reports next,
	// such as a job's JobFinished.
	LockLost
	// LockReleased: a release returned. Start and Duration time the round
	// trip; Token is set. Outcome: OutcomeOK, OutcomeNotHeld (it had lapsed
	// or passed to another owner) or OutcomeError (unknown outcome: it
	// lapses at its expiry). With the scheduler's run ledger the release
	// also writes the run's record, so its errors are ledger write errors
	// too.
	LockReleased
)

// Kinds of the scheduler. Job is set, and Name too for locked jobs; Tick
// and CatchUp describe the tick. A manual run (Manual set, Tick zero) is
// reported like a tick: JobAttempt, JobClaimed, JobStarted, JobFinished,
// JobDone.
const (
	// JobAttempt begins the handling of a locked job's tick on this
	// instance, before the claim. A begin event: what follows (claim,
	// run, release) is reported with the context Observe returns, up to
	// the JobDone that ends it.
	JobAttempt Kind = iota + 32
	// JobClaimed: this instance won the tick. Token is set; Start and
	// Duration time the claim (the acquire round trip). Outcome is
	// OutcomeClaimed.
	JobClaimed
	// JobSkipped: this instance does not run the tick. Outcome is the
	// reason: OutcomeHeld (another replica has the lock), OutcomeStaleTick
	// (the tick ran already), OutcomeStillRunning (the previous run on
	// this instance has not returned) or OutcomePaused (the job is paused
	// here or cluster-wide). Err matches ErrNotAcquired, ErrStaleTick,
	// ErrStillRunning or ErrPaused of package scheduler. Start and
	// Duration time the claim when one was made. LockedBy and Until name
	// the holder when known.
	JobSkipped
	// JobClaimFailed: the claim failed with an error that is not a
	// refusal (unknown outcome, unavailable, invalid); the job does not
	// run. Err is set; Outcome is OutcomeError; Start and Duration time
	// the claim.
	JobClaimFailed
	// JobStarted begins a run: the job function is about to be called. A
	// begin event: the job function runs with the context Observe
	// returns, so spans it starts nest under the run, and JobFinished is
	// reported with that context.
	JobStarted
	// JobFinished: the job function returned. Start and Duration time the
	// run; Err is its error (a *scheduler.PanicError after a panic);
	// Outcome is OutcomeSucceeded, OutcomeFailed, OutcomePanicked,
	// OutcomeLockLost (the lease was lost while it ran) or OutcomeShutDown
	// (it failed while the scheduler was closing).
	JobFinished
	// JobLockLost: a run's lease was lost while it ran (or its grant came
	// too late to be trusted, and the job did not start). Err matches
	// ErrLockLost; Token is set. Like LockLost, it is reported just after
	// the run's context is cancelled and may follow the run's JobFinished.
	// A loss the run did not learn of while it ran (a force-release that
	// no extension or renewal noticed) is found by the run's release: it
	// is reported then, after JobFinished, and the run's JobDone has
	// Outcome OutcomeLockLost.
	JobLockLost
	// JobCatchUp: at Start, a job registered with CatchUp found that no
	// replica ran its latest tick (Outcome OutcomeOK: a run for that
	// tick follows, if this instance wins its claim), or could not
	// read the last tick (Outcome OutcomeError, Err set).
	JobCatchUp
	// JobDone ends what JobAttempt began, after the release. Outcome is
	// that of the run (as JobFinished), or OutcomeSkipped when this
	// instance did not run the tick, or OutcomeError when the claim
	// failed.
	JobDone
)

// Kinds of the rate Limiter (package ratelimit). Policy is set; no event
// carries the key.
const (
	// RateDecision: the provider decided a request. Outcome is
	// OutcomeAllowed or OutcomeDenied; RetryAfter is set when denied;
	// Cost is the units asked for; Start and Duration time the round
	// trip. Policy is the tightest limit's name.
	RateDecision Kind = iota + 64
	// RateError: the provider failed to decide (outcome unknown), or
	// failed to give back a slot that WaitN booked and will not use (Err
	// then reads "ratelimit: refund: ..."). Err is set; Outcome is
	// OutcomeError; Start and Duration time the call.
	RateError
	// RateFallback: the HTTP middleware handled a request without a
	// decision because the provider failed. Outcome is OutcomeFailOpen
	// (let through) or OutcomeFailClosed (answered 503); Err is the
	// provider's error.
	RateFallback
)

// Outcomes, the values of Event.Outcome. They are metric label values:
// a small fixed set, never data.
const (
	OutcomeGranted     = "granted"
	OutcomeRefused     = "refused"
	OutcomeCanceled    = "canceled"
	OutcomeUnavailable = "unavailable"
	OutcomeInvalid     = "invalid"
	OutcomeError       = "error"
	OutcomeOK          = "ok"
	OutcomeNotHeld     = "not_held"

	OutcomeClaimed = "claimed"
	OutcomeSkipped = "skipped"
	// Why a tick was skipped (JobSkipped): the registry's skip reasons
	// (batontype.Skips), defined there once.
	OutcomeHeld         = batontype.SkipHeld
	OutcomeStaleTick    = batontype.SkipStaleTick
	OutcomeStillRunning = batontype.SkipStillRunning
	OutcomePaused       = batontype.SkipPaused
	OutcomeMissed       = batontype.SkipMissed

	// How a run ended (JobFinished, JobDone): the run ledger's
	// batontype.Outcome values, defined there once;
	// batontype.Outcome(e.Outcome) converts back.
	OutcomeSucceeded = string(batontype.OutcomeSucceeded)
	OutcomeFailed    = string(batontype.OutcomeFailed)
	OutcomePanicked  = string(batontype.OutcomePanicked)
	OutcomeLockLost  = string(batontype.OutcomeLockLost)
	OutcomeShutDown  = string(batontype.OutcomeShutDown)

	OutcomeAllowed    = "allowed"
	OutcomeDenied     = "denied"
	OutcomeFailOpen   = "fail_open"
	OutcomeFailClosed = "fail_closed"
)

var kindNames = map[Kind]string{
	LockAttempt:    "lock.attempt",
	LockAcquired:   "lock.acquired",
	LockRefused:    "lock.refused",
	LockExtended:   "lock.extended",
	LockLost:       "lock.lost",
	LockReleased:   "lock.released",
	JobAttempt:     "job.attempt",
	JobClaimed:     "job.claimed",
	JobSkipped:     "job.skipped",
	JobClaimFailed: "job.claim_failed",
	JobStarted:     "job.started",
	JobFinished:    "job.finished",
	JobLockLost:    "job.lock_lost",
	JobCatchUp:     "job.catch_up",
	JobDone:        "job.done",
	RateDecision:   "ratelimit.decision",
	RateError:      "ratelimit.error",
	RateFallback:   "ratelimit.fallback",
}

// String returns the kind's name, such as "lock.acquired" or "job.started".
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind(" + itoa(int(k)) + ")"
}

// Begins reports whether k begins a span of work: its Observe may return
// a derived context, which the caller uses for what follows and for the
// matching end event (see Ends).
func (k Kind) Begins() bool { return k == JobAttempt || k == JobStarted }

// Ends returns the kind that ends the work k begins, or 0 when k begins
// nothing.
func (k Kind) Ends() Kind {
	switch k {
	case JobAttempt:
		return JobDone
	case JobStarted:
		return JobFinished
	}
	return 0
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [4]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
