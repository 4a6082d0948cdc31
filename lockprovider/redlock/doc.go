// Package redlock is a lockprovider over N independent Redis masters (the
// Redlock scheme), with fencing tokens that strictly increase per name. Each
// master is a plain *redis.Client of go-redis v9 on its own server: not
// replicas of one another, not a Cluster. Redis 7.0 or newer. Import it as
// is; it does not clash with go-redis.
//
// The provider implements lockprovider.Provider and
// lockprovider.ReleaseNotifier. It does not own the clients and never
// closes them.
//
// # Grants
//
// With N masters a grant needs a majority, q = N/2+1 (use an odd N of at
// least 3: 3 tolerates one master down, 5 two). Acquire is two parallel
// rounds to the masters, the only provider whose acquire costs two round
// trips per master:
//
//  1. acquire.lua takes the lease where the name is free (SET PX AtMostFor)
//     and returns the master's fencing counter, created from the master's
//     TIME in microseconds when missing;
//  2. with q or more grants, the token is the largest counter plus one, and
//     commit.lua records it on the granting masters (the counter becomes
//     the larger of the two), only where the caller still holds the lease.
//
// The grant counts when q masters recorded the token and the grant is
// still valid when the second round returns: each recorded key lives at
// least until the later of AtMostFor after its first-round request was sent
// and its remaining TTL (read by the second round) after that request was
// sent; the grant is valid until the q-th latest of those instants, less
// the drift allowance AtMostFor*Config.DriftFactor + Config.DriftMin (1 % +
// 2 ms by default). Otherwise it is released everywhere and Acquire returns
// an error matching batontype.ErrUnavailable. One round cannot do both:
// the token must be read from a majority and then be on a majority before
// anyone uses it, so that every later grant, whose majority overlaps this
// one, reads a larger counter. docs/guarantees.md gives the argument and
// what holds under master restarts, pauses and clock jumps.
//
// Lease.GrantedAt is when the first request that took a master was sent,
// and Lease.Until is GrantedAt + AtMostFor, on the client's clock; the
// masters' keys were set after GrantedAt and live at least that long.
// baton's Locker subtracts its own safety margin (baton.Config.SafetyMargin),
// not this drift allowance, from the trust window. Its default, 1 % of the
// lease plus 20 ms or a quarter of the lease if less, is at least the default
// drift allowance for leases of 8 ms or more; with shorter leases, or a
// larger DriftFactor or DriftMin, set SafetyMargin to at least the drift
// allowance.
//
// Extend and Release are one parallel round to every master. Extend
// succeeds when a majority still held the lease and answered within the
// new lease's validity; Release when a majority held it (ErrNotHeld when a
// majority did not).
//
// Every round completes once its outcome is settled: a majority answered
// yes (took the lease, recorded the token, extended, released), or enough
// answered no, or too few can still answer; the other masters then get as
// long again as that took. Calls still running continue in the background
// and never hold the caller, so a silent minority of masters costs
// neither latency nor validity. Only a repeat Acquire by the holder waits
// for a majority agreeing on its token (masters that granted after an
// earlier round completed hold uncommitted copies). Through one Provider,
// an owner's calls on a name still reach each master in the order of the
// operations: a call waits, in the background, for the same owner's
// earlier calls on that name and master still running, so that a release
// still on its way cannot delete the lease a later Acquire with the same
// owner token takes there. A release inside AtLeastFor keeps each
// master's key until the at-least bound on that master's clock, owned by
// nobody: the name stays taken, and the former owner can no longer extend
// or release it.
//
// # Contention
//
// Contenders can split the masters so that nobody has a majority. The one
// holding the most masters (ties: the smaller owner token) then keeps them
// and asks again at once; the others release theirs and back off for a few
// attempts' time, so the split resolves. Acquire returns ErrNotAcquired when
// another owner holds a majority, or when a split did not resolve within
// Config.Timeout.
//
// # Failures
//
// Each master's call is bounded by Config.Timeout, by the caller's
// context's deadline (not its cancellation: a call cut off continues in
// the background up to its bound), and by a share of the lease: half the
// lease's validity for Acquire's first round, what is left of the lease
// for its second, the new lease's validity for Extend. Each round also
// has its own timer, so every operation returns by its context's deadline
// plus the scheduling of a few goroutines, however the clients behave.
// Configure the masters' clients so that they honour those deadlines (go-redis ignores context deadlines on the
// socket unless told otherwise, and waits its ReadTimeout, 3 s) and so that
// a dead master fails fast rather than being retried:
//
//	redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true,
//		DialerRetries: 1, MaxRetries: -1, DialTimeout: 250 * time.Millisecond})
//
// An acquire that fails releases, in the background, on the masters that
// took the lease and on those that did not answer: on each once its
// first-round call has ended (a request in flight could take the lease
// after the release), bounded by Config.Timeout from then; a later
// attempt waits only for the releases on masters that had answered. These
// releases delete only values written or committed by the failed Acquire
// call's own attempts (each attempt's id is in the value, and the
// attempt that commits a value puts its id there), so a late release can
// never remove a later grant: at worst it makes a later attempt's commit
// fail on that master, and a grant counts only with a majority of commits.
// Background calls end within twice Config.Timeout, or at once when the
// clients are closed.
//
// When fewer than a majority answer, operations return an
// *batontype.UnavailableError (NotSent when every failure was a refused
// connection), never ErrNotAcquired.
//
// # Keys
//
// On every master, for a name N under Config.Prefix P (with '%' and '}' in N
// escaped as %25 and %7D): P{N} the lease ("owner\ntoken atLeastAt granted
// until atLeastUntil tick attempt\nLockedBy"), P{N}:f the fencing counter and P{N}:t
// the newest tick (both with TTL Config.RecordTTL, set when created). The
// lease key is also N's release channel.
//
// # Release notifications
//
// The release script PUBLISHes on the lease key's name on each master where
// it freed the name. NotifyRelease subscribes on every master (one
// connection each, shared by all waiters) and returns once a majority
// confirmed, so a release that counted is announced on at least one of
// them. Subscribing and unsubscribing run in the background, in order per
// connection, so a silent master holds neither NotifyRelease nor its stop
// function. After a connection comes back its waiters are woken once.
//
// # Not provided
//
// No lockprovider.Inspector (a name's state is spread over the masters) and
// no rate limiting; use the single-Redis provider for those.
package redlock
