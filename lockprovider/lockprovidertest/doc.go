// Package lockprovidertest is the conformance suite for lockprovider
// implementations, and shared benchmark code. A provider's tests, ours
// or a third party's, call Run, its one entry point:
//
//	func TestConformance(t *testing.T) {
//		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
//			return myprovider.New(client, myprovider.Config{Prefix: uniquePrefix()})
//		})
//	}
//
//	func BenchmarkProvider(b *testing.B) { lockprovidertest.Bench(b, newProvider(b)) }
//
// Run checks what every provider must do (a concurrent randomized
// workload's whole history included), then finds by type assertion
// each optional capability the provider implements (the small interfaces
// of package lockprovider: ReleaseNotifier, Inspector, Admin, RateLister,
// Ledger, Registry, Control, BatchAcquirer, BatchReleaser, BatchLedger,
// RateLimiter) and runs its checks as a subtest group named after it. It
// logs each capability the provider does not implement, for example
// "skipped: rate limiting (provider does not implement
// lockprovider.RateLimiter)", so a provider never misses a suite by
// omission. Bench, BenchHandoff and BenchLedger (what the ledger adds to
// a scheduled claim and release) are shared benchmarks.
//
// Run calls newProvider once to discover the capabilities and then once
// per subtest; each call must return a provider of the same type,
// isolated from the others (a fresh key prefix, schema or table, which
// also keeps registries and control states apart), because subtests run
// in parallel. Lock names and rate-limit keys are generated and never
// repeat within a run. Import this package from tests only.
//
// # What the suite checks
//
// Every provider, grouped by topic (one subtest group each):
//
//   - Acquire: a free name is granted and reads as held; another owner gets
//     ErrNotAcquired and the holder's lease is untouched; names are
//     independent; with AtLeastFor 0 a released name is free at once, ten
//     times in a row; a repeated Acquire by the holder
//     returns the same grant; Until-GrantedAt equals AtMostFor and
//     AtLeastUntil-GrantedAt equals AtLeastFor.
//   - Expiry: an unreleased lease lapses after AtMostFor and is taken over;
//     an expired holder can neither extend nor release; a release inside
//     AtLeastFor keeps the name held until GrantedAt+AtLeastFor and no
//     longer.
//   - Extend: longer and chained, shorter, the extension's AtLeastFor
//     bounds a later release, the extended lease keeps Token and
//     GrantedAt; Extend and Release after a release or on an unknown name
//     return ErrNotHeld.
//   - Owner: a stale or foreign owner token gets ErrNotHeld from Release and
//     Extend (longer and shorter), and the holder's lease and expiry stay as
//     they were, also when both owners share LockedBy.
//   - Token: tokens strictly increase per name across release, expiry,
//     AtLeastFor holds and takeover, and stay the same across Extend
//     and a repeated Acquire.
//   - Tick: a tick not newer than the last granted one for the name gets
//     ErrStaleTick, a newer one (by 1 ms) is granted, also after a lapsed
//     lease; an Acquire without a tick neither checks nor resets it; ticks
//     are per name.
//   - Validation: every rule of lockprovider's Validate methods (name, owner,
//     LockedBy, Tick, durations) on Acquire, Extend, Release, and name rules
//     on Inspect and NotifyRelease, returns a *batontype.ValidationError
//     matching the right sentinel and ErrInvalid, and changes nothing;
//     limit values and names with characters special to Redis keys, SQL and
//     shells work.
//   - Context: a cancelled context and one past its deadline make Acquire,
//     Extend and Release return an error matching the context's error, and
//     leave no lease behind (or the lease unchanged). A nil context makes
//     Acquire, Extend, Release, and NotifyRelease, Inspect and List when
//     implemented, return an error matching batontype.ErrNilContext
//     (and ErrInvalid) without a panic, and changes nothing.
//   - Exclusion: 100 goroutines race for one free name and exactly one wins;
//     workers on two names complete read-sleep-write increments of counters
//     protected only by the lease, with exact final counts, no overlapping
//     holders and increasing fences, also with AtLeastFor.
//   - History: a concurrent randomized Workload (six clients, each a
//     baton.Locker of its own, on two names, for 1.5 s: waits, extensions,
//     fenced writes after Lock.Check, holds past the lease, abandoned
//     locks, stale-handle replays, ticks and, with lockprovider.Admin,
//     force-releases) is recorded and its whole history checked by package
//     history: linearizable per name against the lease model, no two
//     trusted windows overlapping, tokens increasing, no fenced write
//     accepted below a larger token. The seed is logged; SEED=n replays its
//     choices. Providers whose documented guarantees differ pass Run the
//     option WithHistory (etcd and Redlock report the client's clock at the
//     send, Redlock's contenders can split the votes, the ShedLock modes
//     refuse ticks older than a grant).
//
// Each optional capability, when the provider implements it (one
// subtest group each; each group but Notify and Inspect has a NilContext
// case: every method it covers, given a nil context and otherwise valid
// arguments, returns an error matching batontype.ErrNilContext and
// ErrInvalid, does not panic, and changes nothing):
//
//   - Notify (lockprovider.ReleaseNotifier): a registration is signalled by each
//     release, stop unregisters and is idempotent, other names do not
//     signal, and an unread channel blocks nothing. A registration must be
//     in effect when NotifyRelease returns.
//   - Inspect (lockprovider.Inspector): unknown names read Exists false; Held, LockedBy, GrantedAt,
//     Until, Token and LastTick follow a lease through grant, extend,
//     release and the next grant; List reports exactly this provider's
//     names, once each.
//   - Admin (lockprovider.Admin): ForceRelease frees a lease inside its
//     minimum hold, only with the right token when one is given, reports
//     what it freed, wakes waiters and makes the next token larger;
//     Inspect reports each lease's minimum hold; Ping answers; ResetRate
//     gives a key its capacity back, and a lockprovider.RateLister lists
//     the key while it has state and not after the reset.
//   - Ledger (lockprovider.Ledger): AcquireRun opens one record per
//     grant (none for a refusal or the holder's retry), ReleaseRun
//     completes it, also after the lease was lost; Runs and LastRuns
//     filter and order as documented; retention; validation. With
//     lockprovider.Admin, ForceRelease marks the freed lease's run (and
//     no other) with its ReleasedBy and ReleasedAt, which the old
//     holder's end keeps.
//   - Registry (lockprovider.Registry): registered instances are listed
//     with their jobs, expire after their TTL unless renewed, and
//     Heartbeat and Deregister act as documented; validation.
//   - Control (lockprovider.Control): paused flags, run requests claimed
//     exactly once under concurrency, request expiry, change
//     announcements, validation and done contexts.
//   - Batch (lockprovider.BatchAcquirer): every item of a batch behaves
//     as Acquire of that item, in mixed batches, with repeats, oversized
//     batches and concurrent batches; on AcquireRunBatch too when the
//     provider implements lockprovider.BatchLedger.
//   - BatchRelease (lockprovider.BatchReleaser): every item of
//     ReleaseBatch behaves as Release of that item, waiters included.
//   - BatchLedger (lockprovider.BatchLedger): AcquireRunBatch opens each
//     run as AcquireRun, ReleaseRunBatch completes it as ReleaseRun.
//   - Rate (lockprovider.RateLimiter): decisions compared with those
//     of the memory provider, the reference implementation, in the
//     subtests below.
//
// The Rate group, one subtest each:
//
//   - AgreesWithMemory: random requests (costs, reservations, refunds) on
//     one and several limits get exactly the decision the memory provider,
//     the reference implementation, makes at the server time reported.
//   - FreshKeyAdmitsCapacity, PeekChargesNothing: every algorithm admits
//     exactly its capacity on a fresh key and refuses the next unit with a
//     RetryAfter; N = 0 charges nothing.
//   - MultiLimitAtomic: a request refused by one limit charges none.
//   - KeysIndependent: keys with characters special to Redis keys, SQL
//     and shells, and limits differing only in algorithm or period, do not
//     share state.
//   - ReserveAndRefund: TokenBucket and GCRA book ahead within MaxDelay,
//     refuse beyond it without booking, and give units back up to the
//     capacity.
//   - Validation, Context, NilContext: every rule of RateRequest.Validate,
//     a done context and a nil one fail with the right error and charge
//     nothing.
//   - ConcurrentExact: 128 concurrent requests admit exactly the capacity.
//   - StateExpires: a drained key is full again after ResetAfter.
//   - Bounds: many times the limit offered for three seconds never breaks
//     the algorithm's bound (judged on the server times reported) and
//     admits at least 90% of what the algorithm admits for those arrivals.
//
// # What providers test themselves
//
// Storage-specific items need access the suite does not have, so provider
// packages test them: a caller's open transaction around lock calls, a
// local "row exists" cache (not used by our providers), pre-existing stale
// rows and untouched neighbouring rows at the storage level (beyond the
// behaviour checked here), times stored in UTC whatever the process time
// zone, a skewed client clock, one round trip per operation, and that
// every key or row written expires.
// Handles in lockprovider are owner tokens that Extend keeps, so ShedLock's
// single-use handles reduce to the stale-owner checks above. Keep-alive
// and executor behaviour belong to package baton and scheduler.
//
// # Timing
//
// Leases in the suite last 50 ms to a few hundred ms, and waits poll every
// few milliseconds up to a limit, so a provider's run takes seconds. Lease
// times come from the backend's clock, which the suite assumes runs on the
// test machine or in step with it. A timing-dependent check that a busy
// machine made inconclusive is repeated with longer leases rather than
// passed or failed; so is a case in which a call for a short lease failed
// with an error matching batontype.ErrUnavailable (a provider that could
// not finish the grant within the lease's validity).
package lockprovidertest
