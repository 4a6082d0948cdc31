// Package redis is a lockprovider on Redis 7.0 or newer, through go-redis
// v9: standalone, Sentinel (failover clients) and Cluster. Import it under a
// name that does not clash with go-redis, e.g. redisprovider.
//
// The provider implements lockprovider.Provider, lockprovider.ReleaseNotifier
// and lockprovider.Inspector. Every operation is one EVALSHA of an embedded
// Lua script (go-redis falls back to EVAL when the server answers NOSCRIPT,
// e.g. after a restart, failover or SCRIPT FLUSH, which costs that call a
// second command). It does not own the client and never closes it. It
// also implements the operator capabilities, lockprovider.Control
// included: paused flags, pause spans and run requests under P+"control:{baton}",
// announced on that sharded channel (see docs/operations.md for the keys).
//
// # Keys
//
// For a lock name N under Config.Prefix P, with '%' and '}' in N escaped as
// %25 and %7D:
//
//	P{N}     the lease: a string holding owner, at-least bound, grant time,
//	         tick and LockedBy (see lease.go); its expiry is the lease's end
//	P{N}:f   the fencing counter; TTL Config.RecordTTL, set when created
//	P{N}:t   the newest tick granted (tick acquires only); TTL
//	         Config.RecordTTL, refreshed on each tick grant
//
// N is the hash tag, so all keys of a name, and its release channel P{N},
// live in one Cluster slot: scripts never cross slots. Every key expires.
// Other features sharing the prefix (e.g. rate limits) must not use keys
// beginning with P{.
//
// # Scripts and clock
//
// lock_acquire.lua grants in three commands: TIME, SET NX PXAT (the lease
// ends at the grant time plus its length, so the reply carries both without
// a PEXPIRETIME) and SET GET of the fencing counter. Lease times are
// Redis's clock (its wall clock, in milliseconds); the application's clock
// is never used. The token is the larger of the previous token + 1 and the
// server's TIME in microseconds, and becomes the counter's value: a counter
// that is missing (first use, expiry, FLUSHALL, a restart without
// persistence) or behind (a failover to a lagging replica) cannot make a
// token repeat, and a clock stepping back on one server cannot either.
// lock_acquire_tick.lua adds the tick check; lock_extend.lua,
// lock_release.lua and lock_inspect.lua do the rest.
//
// # Failover
//
// Redis replicates asynchronously. A failover can lose a lease: another
// owner then acquires it while the first still believes it holds it. It
// can also lose the newest fencing counter values, but not repeat a token:
// the promoted replica's first grant takes its own TIME, later than every
// earlier grant as long as its clock is not behind the old master's by more
// than the failover took. Fencing on the protected resource is what
// protects data; the lease alone does not. The same holds for a restart
// without persistence.
//
// # Release notifications
//
// Release announces on sharded pub/sub (SPUBLISH to P{N}), only when it
// frees the name. On a single server one SSUBSCRIBE connection per Provider
// serves every waiter; on Cluster, one connection per slot with waiters
// (sharded channels of one connection must share a slot); on a Ring, one per
// name. Connections open with the first waiter and close with the last,
// and NotifyRelease returns once the server confirmed the subscription.
// After a lost connection is re-established, or when Cluster moves a slot
// away, the affected waiters are woken once, since a release may have gone
// unheard. Expiry is not announced: waiters keep a fallback poll.
//
// # Inspection
//
// Inspect reads the three keys in one script. A released or expired lease
// leaves no trace but its fencing counter and newest tick, so LockedBy,
// GrantedAt and Until are reported only while a lease is held. List SCANs
// every master (or shard) for the prefix and then inspects each name: work
// in proportion to the number of keys under the prefix, for operators, not
// hot paths.
//
// # Deadlines and outages
//
// New refuses a *goredis.Client (standalone or Sentinel failover),
// *goredis.ClusterClient or *goredis.Ring whose ContextTimeoutEnabled is
// false, with a ValidationError matching batontype.ErrInvalid that names
// the option. Without it go-redis ignores context deadlines: it bounds each
// socket read by ReadTimeout (3 s by default) and write by WriteTimeout,
// and resends up to MaxRetries times (3), so a call against a server that
// stopped answering outlives a 2 s deadline by seconds (10 s was measured
// with the defaults). With it, every call returns by its context's deadline
// plus scheduling slack, and ReadTimeout still bounds calls whose context
// has none. Other implementations of Client cannot be inspected; they must
// honour context deadlines themselves.
//
// A server that could not be reached or did not answer in time gives an
// error matching batontype.ErrUnavailable, never ErrNotAcquired: an
// *batontype.UnavailableError with NotSent set when the command cannot
// have been sent (a refused dial, a closed client, no pooled connection free
// within PoolTimeout), otherwise of unknown outcome (timeouts, resets, a
// server answering LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN or BUSY).
//
// # Retries
//
// go-redis resends a command whose reply timed out (Options.MaxRetries). A
// resent Acquire returns the same grant; a resent Release that had already
// succeeded reports ErrNotHeld; a resent Extend extends again from the
// later instant, or reports ErrNotHeld when the lease was force-released
// between the sends, though the first send extended it. Either way the
// answer is true when it is given: the lease is not held any more. A repeated Acquire while the fencing counter has expired
// or was lost under a held lease (a lease outliving Config.RecordTTL, or
// partial data loss) cannot recover its token and fails as outcome unknown.
package redis
