// Package lockprovider is the contract between baton and the providers that
// hold its leases and rate-limit state (Redis, PostgreSQL, memory, or your
// own): the service provider interface (SPI), in the manner of
// database/sql/driver. Applications use package baton, scheduler, ratelimit,
// fence and batontype; provider authors implement the interfaces here.
//
// # Leases
//
// A provider grants a lease on a name to one owner at a time. A lease lasts
// AtMostFor from the moment the backend grants it, measured on the backend's
// clock (Redis TIME and PX, PostgreSQL clock_timestamp), never on the
// application's. Extend and Release act only when the caller presents the
// owner token of the current lease, so a stale holder can never shorten,
// prolong or drop a lease that has since passed to someone else.
//
// Release honours AtLeastFor: when the lease is released before GrantedAt +
// AtLeastFor, the lease stays in force until that instant instead of ending.
//
// # Fencing tokens
//
// Every grant carries a fencing token that strictly increases per name across
// release, expiry, takeover and backend restarts. Tokens of different names
// are not comparable. Gaps are allowed.
//
// # Ticks
//
// An acquire may carry a tick, the scheduled fire time of a job. The provider
// remembers the newest tick it granted per name and refuses a tick that is
// not newer with ErrStaleTick, so a replica that fires late cannot run a tick
// that already ran.
//
// # Errors
//
// Providers answer with the errors of package batontype, the leaf package
// of the types applications handle: batontype.ErrNotAcquired and
// ErrStaleTick are definite refusals, returned only when the backend said
// so; ErrNotHeld says the presented owner no longer holds the lease; bad
// input is a *batontype.ValidationError matching ErrInvalid. A backend that
// could not be reached or did not answer in time gives a
// *batontype.UnavailableError (matching ErrUnavailable, never
// ErrNotAcquired); with NotSent set the request never left the client and
// nothing changed. Any other error, and an unavailability without NotSent,
// means the outcome is unknown: the operation may or may not have taken
// effect, and a lease it may have granted lapses at its expiry.
// batontype.Definite tells the two apart. Repeating an Acquire with the
// same owner token is safe: while the owner holds the lease, it returns
// the same grant.
//
// A nil context is bad input too: every provider method that takes one
// returns batontype.ErrNilContext before it touches the backend, whose
// driver would panic on it; CheckContext is the check. A method that
// returns a stop func returns a no-op one with it.
//
// # Types
//
// This package holds only what a provider author implements or calls. The
// values the capabilities carry that applications and operators also
// handle (run records, job specs, instances, lease state, run requests,
// rate-limit specs) are in package batontype.
//
// # Round trips and concurrency
//
// Every operation is one round trip to the backend (one script, one
// statement), atomic on the server. Providers are safe for concurrent use.
//
// # Optional capabilities
//
// A provider may implement ReleaseNotifier (wake waiters when a lease ends),
// Inspector (read lease state for operators and catch-up), RateLimiter
// (server-side rate limiting), Admin (force-release, rate-limit reset,
// ping), RateLister (list rate-limit state), Ledger (a record of every
// scheduled run, written by the claim and the release themselves),
// Registry (scheduler instances publish their jobs and a heartbeat),
// Control (cluster-wide paused flags and run-now requests for the
// scheduler), and BatchAcquirer and BatchLedger (many claims in one round
// trip, each with Acquire's semantics, for jobs due at the same instant).
// Consumers discover them by type assertion.
//
// # Conformance
//
// A provider's tests, ours and third parties' alike, call
// lockprovidertest.Run: it checks the lease contract, then finds each
// optional capability above by type assertion and runs its checks, and
// logs the capabilities the provider does not implement.
package lockprovider
