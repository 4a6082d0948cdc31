// Package ratelimit limits how often a key (a user, a client address, a
// downstream API) may do something, across every replica of a service,
// with the state and the arithmetic on a shared provider: Redis,
// PostgreSQL, or in process memory (any lockprovider.RateLimiter).
//
// A Limiter holds one or more Limits. Each decision is one round trip to the
// provider, atomic on the server and computed on the server's clock in integer
// microseconds, so replicas whose clocks disagree still share one budget:
// the application clock plays no part in any decision. Several limits on
// one key (say 50 per second and 1000 per hour) are checked and charged
// together: a request is admitted only if every limit admits it, and a
// refused request is charged nothing. State expires on the provider once it
// no longer matters (Redis key TTLs; PostgreSQL expired rows swept; memory
// entries swept), so keys seen once cost nothing forever.
//
// The API follows golang.org/x/time/rate: [Limiter.Allow] and
// [Limiter.AllowN] decide now, [Limiter.Wait] and [Limiter.WaitN] block
// until the request may pass or the context's deadline cannot be met.
//
// # Algorithms
//
//	algorithm       bound (L per period W, burst B)            precision        memory per key   reserve (Wait)
//	FixedWindow     ≤ L per window aligned to the epoch;        exact per window 1 counter        no (retries)
//	                up to 2L across a window boundary
//	SlidingLog      ≤ L in every span of length W               exact            one entry/unit   no (retries)
//	SlidingWindow   prev·(W−e)/W + cur ≤ L at each admission;   approximate      2 counters       no (retries)
//	                ≤ L per aligned window, < 2L in any span W
//	TokenBucket     ≤ B + L·t/W in any span t                   exact (integer)  2 integers       yes, refundable
//	GCRA            ≤ B + L·t/W in any span t                   exact (integer)  1 timestamp      yes, refundable
//
// Every algorithm costs one round trip per decision. On Redis that is one
// EVALSHA of one script (a second, EVAL, only after the server lost its
// script cache); on PostgreSQL one statement.
//
// FixedWindow counts per window of Period aligned to multiples of Period
// since the Unix epoch on the server clock. It is the cheapest and lets up
// to 2×Rate through in a short span around a boundary: Rate at the end of
// one window and Rate at the start of the next.
//
// SlidingLog keeps the time of every admitted unit for one Period and is
// exact, at the cost of memory and work that grow with Rate (at most
// batontype.MaxLogLimit). Prefer SlidingWindow or GCRA for large rates,
// and on PostgreSQL in particular.
//
// SlidingWindow (the sliding window counter) estimates the count over the
// last Period from two fixed windows, weighting the previous window by how
// much of it the sliding window still covers, as if its traffic had been
// uniform. It never admits more than Rate per aligned window, and needs
// two counters.
//
// TokenBucket and GCRA admit the same traffic: a bucket of Burst units
// refilled continuously at Rate per Period. GCRA stores one theoretical
// arrival time; TokenBucket stores a token count and its time. A fresh key
// admits exactly Burst units at once (not Burst+1). Both compute the
// emission interval Period/Rate exactly as a fraction of microseconds, so
// no rounding accumulates; this requires Burst × Period/gcd(Period, Rate)
// (in µs) ≤ 2^50, checked by New.
//
// # Providers
//
// Redis (lockprovider/redis): one key per key and limit,
// <prefix>rl:{<key>}:<limit id>, holding a short string (a sorted set for
// SlidingLog); the key is the hash tag, so all limits of a key share a
// Cluster slot. Every write sets PX to the instant the limit is full again.
// A one-limit decision runs a small script per algorithm, several limits
// one general script; both use the server's TIME.
//
// PostgreSQL (lockprovider/postgres): one row per key and limit in the rate
// table (UNLOGGED unless Config.RateLogged), decided by a plpgsql function
// that Migrate installs, in one statement that locks the rows and then reads
// clock_timestamp(). Requests on one key queue on its rows, so a hot key
// decides about one request per statement time (a few thousand a second on
// loopback). Expired rows are swept by the decisions themselves (about one
// call in 256 deletes up to 2048) and by Provider.SweepRates.
//
// Memory (lockprovider/memory): the reference implementation, for one
// process and for tests; its clock is Config.Now.
//
// # Waiting
//
// [Limiter.Wait] on TokenBucket and GCRA limits is the leaky bucket as a
// queue: one round trip reserves the next free slot on the server and Wait
// sleeps until it, so waiters are served in order. It fails at once,
// without reserving, when the slot lies beyond the context's deadline, and
// gives the slot back if the context ends while sleeping. The window
// algorithms cannot reserve: Wait retries after the RetryAfter the provider
// reports, also failing early when that lies past the deadline.
//
// # Bad input
//
// Non-positive rates or periods, a burst on a window algorithm, a negative
// cost or one above a limit's capacity (which could never pass), an empty,
// over-long, non-UTF-8 or control-character key, and duplicate limits are
// errors matching
// [ErrInvalid] (a *batontype.ValidationError says which field and why).
// Nothing is clamped. A nil or typed-nil provider, a zero Limiter and a nil
// context are errors too ([ErrNilProvider], [ErrNilContext]), never a panic.
//
// # HTTP
//
// [Middleware] limits an http.Handler per key ([RemoteIP], [HeaderKey] or
// your own [KeyFunc]), answers 429 with Retry-After rounded up to whole
// seconds, sets the IETF RateLimit-Policy and RateLimit fields on every
// decided response, and fails open or closed (the default) when the
// provider is down, logging and reporting each failure.
//
// # Telemetry
//
// A Limiter's [Config.Observer], an observe.Observer, receives each
// decision (with the tightest limit's policy name, outcome and
// retry-after), each provider error and each fail-open or fail-closed
// fallback of the middleware. Events carry no key: keys are data
// and must not become metric labels.
package ratelimit
