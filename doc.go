// Package baton coordinates work across the replicas of a service: a
// distributed lock with fencing tokens, on a pluggable provider
// (lockprovider: Redis, PostgreSQL, or in-process memory). Package scheduler
// builds ShedLock-style scheduled jobs on the same providers, package
// ratelimit distributed rate limits, and package fence makes a protected
// resource reject stale writes.
//
// # Acquiring
//
// A Locker hands out locks from one provider:
//
//	locker, err := baton.NewLocker(provider, nil)
//	lock, err := locker.TryAcquire(ctx, "sync:customer:42", &baton.AcquireOptions{AtMostFor: 30 * time.Second})
//	if errors.Is(err, baton.ErrNotAcquired) {
//		return nil // someone else is on it
//	}
//	defer lock.Release(ctx)
//
// TryAcquire makes one attempt. Acquire waits: it is woken by the provider's
// release notifications when it has them (Redis pub/sub, PostgreSQL
// LISTEN/NOTIFY, the memory provider's channels) and otherwise polls with
// jittered exponential backoff; it polls in any case, because expiry is not
// announced. It always makes its first attempt, however close the deadline;
// after the backend answered "held", it gives up early with
// ErrDeadlineTooSoon (which matches context.DeadlineExceeded) when the
// deadline leaves less than one round trip to the provider; it cannot know
// when the current holder will let go, so otherwise it waits until the
// deadline. Each provider call is bounded by Config.CallTimeout when the
// context has no earlier deadline.
//
// # Leases, trust window and loss
//
// A lock is a lease: it ends after its AtMostFor (lockAtMostFor) unless extended,
// measured on the backend's clock. The holder cannot read that clock, so it
// keeps a local trust window on its own monotonic clock: from the moment the
// acquire request was sent (not when the answer arrived, so a slow round trip
// cannot stretch it) for AtMostFor minus a safety margin. The margin
// (Config.SafetyMargin) is by default 1% of AtMostFor, for clocks that run at
// slightly different rates, plus 20 ms for timers that fire late and
// goroutines that wait for a CPU under load; for leases under 80 ms it is a
// quarter of the lease instead of 20 ms, so that short leases keep most of
// their window. Every successful Extend or renewal restarts the window at the
// moment its request was sent, minus the margin for its length.
//
// Lock.Context is cancelled with cause ErrLockLost when the window ends
// without a renewal, or when a renewal or Extend finds the lease gone (the
// cause then also matches ErrNotHeld). Work done under the lock should use
// that context. The cancellation comes from a timer, which runs late in a
// process that was paused or starved of CPU; Lock.Check compares the window
// with the clock at once and is what to call just before acting on the
// protected resource. The fenced writes of package fence call it themselves
// when given the lock's Context (or a context derived from it).
//
// With AcquireOptions.AutoRenew, a goroutine owned by the Lock extends the
// lease by AtMostFor a third of AtMostFor after the previous renewal was
// sent (not after its reply, so round trips of up to a third of the lease
// never cost the lock); a renewal that fails with an unknown outcome is
// retried promptly until the window ends, and the goroutine ends at Release
// or loss. Without it, call Extend yourself. A Lock with auto-renew that is
// never released keeps its goroutine and its lease: always Release.
//
// Release is idempotent, ignores the cancellation of its context so it can
// run during shutdown (bounded by Config.ReleaseTimeout), and honours
// AtLeastFor: released early, the lease stays until GrantedAt + AtLeastFor.
// When a Release's reply is lost, calling it again tells the outcomes
// apart: nil if the first one landed (the retry was sent inside the trust
// window), an error matching ErrLockLost and ErrNotHeld if the lease had
// lapsed.
//
// # Fencing tokens
//
// A lease-based lock cannot guarantee by itself that only one process acts
// at a time: a holder paused (garbage collection, a stopped VM, a slow disk)
// past its lease wakes up believing it still holds the lock, after another
// process acquired it. The trust window narrows that gap but cannot close it,
// because the pause can fall between the check and the write. Lock.Token
// returns a fencing token that is larger than the token of every earlier
// grant of the same name; when the protected resource remembers the largest
// token it has seen and refuses smaller ones (packages fence/pgfence,
// fence/redisfence and fence do this for SQL rows, Redis hashes and
// in-process values), a stale holder's writes
// are rejected. Tokens are comparable only within one lock name: guard each
// resource with one lock name. Without fencing, treat the lock as an
// efficiency measure (it avoids duplicate work almost always), not as a
// guarantee of correctness.
//
// # No reentrancy
//
// Go has no goroutine identity, so a lock cannot be tied to a thread as in
// Java: acquiring a name you already hold fails (TryAcquire) or waits for
// your own lease to end (Acquire). Pass the *Lock to the code that needs it
// instead. Any goroutine holding the *Lock may Extend or Release it.
//
// # Errors
//
// ErrNotAcquired, ErrNotHeld, ErrLockLost, ErrReleased, ErrUnavailable and
// ErrDeadlineTooSoon are sentinels. An error matches ErrNotAcquired only
// when the backend answered that another owner holds the name; an
// unreachable or silent backend gives ErrUnavailable instead, so code that
// skips on ErrNotAcquired does not skip silently through an outage. Bad
// input (a nil or typed-nil provider, a nil context, an empty or over-long
// name, a negative AtMostFor, AtLeastFor above AtMostFor) returns a
// *ValidationError matching ErrInvalid, in this package and every other
// one of the module. Other errors come from the backend and mean the
// outcome is unknown; baton then releases whatever the failed attempt may
// have granted, so a failed acquire never leaves a lock held silently. Each
// error names its operation once: baton: acquire "name": ....
//
// # Telemetry
//
// Config.Observer receives the Locker's events (package observe): every
// acquire call to the provider, each grant with its wait and token, each
// refusal with its reason, and each extension, loss and release of its
// locks, reported with the context the lock was acquired with. Unset, it
// costs nothing. The adapters in contrib/otel and contrib/prometheus turn
// the events into metrics and spans.
package baton
