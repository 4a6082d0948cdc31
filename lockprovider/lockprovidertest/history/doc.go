// Package history checks whole histories of lock operations against a
// model of correct leases, for provider authors and for applications that
// want a verdict on their own runs rather than a list of scenarios.
//
// Record, then check:
//
//	h := history.New()
//	p := h.Provider(provider, client) // every Acquire, Extend, Release (ForceRelease, Inspect) recorded
//	// ... run clients through p (a baton.Locker over it, say), and report
//	// what they acted on with h.Window and h.Fenced ...
//	history.Verify(t, h, history.Config{Seed: seed})
//
// Each operation is recorded with its invocation and response times (the
// monotonic clock, anchored to the wall clock so that the histories of
// several processes on one machine can be merged with Merge after Save and
// Load), its arguments, and its result: a definite answer (granted,
// ErrNotAcquired, ErrNotHeld, ErrStaleTick) or an unknown outcome (a
// timeout, a dropped connection: the operation may or may not have taken
// effect, at any time after its invocation).
//
// # What Check verifies
//
//   - Linearizability per lock name, with porcupine, against a sequential
//     lease model: a name is free, or held by one owner with a token, an
//     end (Until) and a minimum hold (AtLeastUntil). Acquire grants a free
//     or expired name with a token larger than every token granted before,
//     returns the same grant to its holder, refuses (ErrNotAcquired) only
//     while another lease is in force, and refuses a tick that is not newer
//     than the last one granted (ErrStaleTick). Extend succeeds only for the
//     holder of a lease in force, keeps the token, and never moves the
//     minimum hold earlier unless it ends the lease before it. Release
//     succeeds only for the holder, and leaves the name held until its
//     minimum hold; ErrNotHeld is only right when the caller did not hold a
//     lease in force. Inspect (through the recorded provider's Inspector)
//     sees the lease in force with its token, or a free name once it ended.
//     An operation of unknown outcome may have taken effect
//     or not. The backend's times in the replies (GrantedAt, Until) must fall
//     within the call, give or take Config.Skew.
//   - Trusted windows (Window): no two grants' windows of one name overlap
//     (at most Config.Permits for a semaphore). A window ends where the
//     holder stopped acting, or at an operator's force-release of its grant.
//   - Fenced writes (Fenced): no resource accepted a write with a token lower
//     than one it had accepted before the write was invoked.
//
// A failure reports the seed (Config.Seed), the shortest failing
// sub-history it finds (the operations answered by the earliest instant
// at which the history is already wrong, those still in flight counted as
// of unknown outcome), where the search for an order got stuck, and, from
// Verify, porcupine's HTML picture of the history in a file it names.
//
// # Limits of the model
//
// Times are compared on one machine's clock: the backend's clock is taken to
// agree with the local one within Config.Skew (5 ms by default), which holds
// for servers on the same host, as in the test suites. Providers whose
// guarantees differ in a documented way say so through Config: ClientGrantTime
// (etcd, Redlock report the client's clock at the send), SplitVotes (Redlock's
// contenders may all be refused), RowLocks (a SQL provider refuses a
// contender while another's claim holds the row locked), TickAfterGrant (the ShedLock modes), Linger
// (a backend whose leases end after their Until). Windows and writes are
// checked as recorded: a workload that does not report what it acted on is
// not checked for it.
package history
