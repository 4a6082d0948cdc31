// Package etcd is a lockprovider on etcd v3, through go.etcd.io/etcd/client/v3.
// Leases are decided by the cluster's consensus: a grant, an extension or a
// release takes effect only once a majority of members has logged it, so a
// leader failure or a member restart loses none of them, and fencing tokens
// are etcd revisions, which only grow.
//
// The package is a Go module of its own (github.com/baton-go/baton/lockprovider/etcd)
// because the etcd client brings gRPC, protobuf and zap with it; the
// baton module itself stays free of them. Its version follows baton's.
//
// The provider implements lockprovider.Provider, lockprovider.ReleaseNotifier
// and lockprovider.Inspector. It does not own the client and never closes it.
//
// # Keys
//
// For a lock name N under Config.Prefix P:
//
//	P lock/N  the lease: owner token, Until and at-least bound (client ms);
//	          attached to an etcd lease of AtMostFor rounded up to seconds
//	P hold/N  present while a release must keep N held (AtLeastFor); on an
//	          etcd lease of AtLeastFor rounded up to seconds
//	P rec/N   the current or last grant (owner, grant time, Until, tick,
//	          LockedBy); written only by grants, so its ModRevision is the
//	          grant's fencing token. No TTL: one small record per name, like
//	          a row of the PostgreSQL provider
//	P tick/N  the newest tick granted (ns), for tick identity. No TTL
//
// # Operations and round trips
//
// Acquire grants an etcd lease (two when AtLeastFor rounds to another
// whole second), then decides in one transaction: it takes the name only if
// the lock and hold keys are absent and, with a tick, the stored tick is
// older. The fencing token is that transaction's revision: larger than
// every earlier revision of the cluster, so tokens strictly increase per
// name across releases, expiries, leader changes and member restarts, and
// deleting the record keys cannot make them repeat. The first ticked
// acquire of a name needs a second transaction (etcd compares a missing
// key's value as false). A refused acquire revokes the leases it granted.
// Extend grants new leases and moves the keys onto them in one transaction
// that checks the owner; Release is one transaction. So a decision is
// always one transaction, and an acquire or extend costs one or two lease
// grants more. The leases an extension or release leaves without keys
// expire on their own.
//
// # Whole-second leases and the trust window
//
// etcd leases have whole-second TTLs, and etcd raises small ones to its
// minimum (1.5 × election timeout, rounded up: 2 s with default settings).
// The provider rounds AtMostFor up, never down, and reports Until =
// GrantedAt + AtMostFor, where GrantedAt is the client's clock just before
// it asked for the lease. etcd starts the lease after that instant and only
// lengthens leases on a leader change, so the etcd lease always ends after
// Until: a holder that trusts its lease until Until (as baton's Lock does,
// minus its safety margin) never trusts it after etcd has let another owner
// in. The price is that a name stays taken until etcd's lease ends, and
// etcd ends an expired lease only when its leader next looks for expired
// ones (every 500 ms) and has logged the revocation: a 300 ms lease (as
// any lease of up to 2 s) keeps others out for 2 to 2.5 s (measured
// 2.11–2.51 s on etcd 3.4 with default settings), a longer one for its
// whole seconds plus up to half a second.
//
// The owner's own view is exact: Extend refuses (ErrNotHeld) once Until
// has passed, and Release after Until removes the lingering key and
// reports ErrNotHeld. A release inside AtLeastFor leaves the hold key; a
// release after the at-least bound removes it too.
//
// Config.ClockExpiry makes contenders treat a lease whose Until has passed
// on their own clock as ended (taking it over with a compare-and-swap on
// its revision), so sub-second leases lapse on time. Mutual exclusion then
// depends on the clients' clocks agreeing, as with ShedLock's JDBC
// provider: a client whose clock runs ahead takes leases over early.
// Fencing tokens are unaffected. The conformance suite, whose leases last
// 50 ms, runs in this mode.
//
// # Clocks
//
// etcd exposes no clock. Expiry is decided by etcd's lease timers on the
// leader; the times in a Lease and a LeaseInfo are the granting client's
// clock (Unix milliseconds), informational for operators.
//
// # Errors
//
// Each call is bounded by Config.Timeout (default 5 s) when its context
// allows longer, because the etcd client otherwise waits indefinitely for
// a reachable member. Every timeout, lost quorum (no leader), leader
// change, stopping or unreachable member returns an
// *batontype.UnavailableError (errors.Is(err, batontype.ErrUnavailable),
// never ErrNotAcquired), whichever form etcd gives it: a gRPC Unavailable
// or DeadlineExceeded status, one of etcd's "request timed out" or "no
// leader" errors, or the Unknown "context deadline exceeded" an etcd 3.4
// server answers when a proposal waited for a leader until the call's
// deadline. NotSent is set only when nothing can have been applied: the
// etcd lease grant failed, before the deciding transaction was sent (a
// lease it may have left holds no key and expires by itself); etcd refused
// the request before proposing it ("too many requests"); or gRPC never
// had a connection to send it on. The caller's own context ending returns
// its error.
//
// # Release notifications
//
// One watch on the prefix, filtered to deletions, serves all waiters of a
// provider while any exist. Because etcd deletes a lease's keys when the
// lease ends, expiries are announced as well as releases. The watch
// requires a leader; when it fails it is reopened from the last revision
// seen and every waiter is woken once.
//
// # Rate limiting
//
// The provider does not implement lockprovider.RateLimiter. etcd runs no
// server-side scripts: a rate-limit decision would be a read, a computation
// on the client and a compare-and-swap transaction, retried under
// contention, so it could not be one round trip, and every decision would
// be a Raft write. Use the Redis or PostgreSQL provider for rate limits.
package etcd
