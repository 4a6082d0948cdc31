// Package lockprovidertest is the conformance suite for lockprovider
// implementations, and shared benchmark code. Every provider in this module
// runs it, and a third-party provider should too:
//
//	func TestConformance(t *testing.T) {
//		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
//			return myprovider.New(client, myprovider.Config{Prefix: uniquePrefix()})
//		})
//	}
//
//	func BenchmarkProvider(b *testing.B) { lockprovidertest.Bench(b, newProvider(b)) }
//
// The optional operator capabilities have suites of their own, which fail
// when the provider lacks the capability: RunAdmin (lockprovider.Admin and
// RateLister), RunLedger (lockprovider.Ledger, including retention) and
// RunRegistry (lockprovider.Registry; providers must not share a
// registry). BenchLedger measures what the ledger adds to a scheduled
// claim and release.
//
// Run calls newProvider once per subtest; each call must return a provider
// isolated from the others (a fresh key prefix, schema or table), because
// subtests run in parallel. Lock names are generated and never repeat within
// a run. Import this package from tests only.
//
// # What the suite checks
//
// Grouped by topic (one subtest group each; the C-numbers refer to the
// checklist in the project's ShedLock study):
//
//   - Acquire: a free name is granted and reads as held (C1); another owner
//     gets ErrNotAcquired and the holder's lease is untouched (C2, C17);
//     names are independent (C3, C16); with AtLeastFor 0 a released name is
//     free at once, ten times in a row (C4); a repeated Acquire by the holder
//     returns the same grant; Until-GrantedAt equals AtMostFor and
//     AtLeastUntil-GrantedAt equals AtLeastFor.
//   - Expiry: an unreleased lease lapses after AtMostFor and is taken over
//     (C5, C14, C18); an expired holder can neither extend nor release (C10);
//     a release inside AtLeastFor keeps the name held until
//     GrantedAt+AtLeastFor and no longer (C6).
//   - Extend: longer and chained (C9), shorter, the extension's AtLeastFor
//     bounds a later release (C11), the extended lease keeps Token and
//     GrantedAt; Extend and Release after a release or on an unknown name
//     return ErrNotHeld (C10, C12).
//   - Owner: a stale or foreign owner token gets ErrNotHeld from Release and
//     Extend (longer and shorter), and the holder's lease and expiry stay as
//     they were, also when both owners share LockedBy (C20, C22).
//   - Token: tokens strictly increase per name across release, expiry,
//     AtLeastFor holds and takeover (C23), and stay the same across Extend
//     and a repeated Acquire.
//   - Tick: a tick not newer than the last granted one for the name gets
//     ErrStaleTick, a newer one (by 1 ms) is granted, also after a lapsed
//     lease; an Acquire without a tick neither checks nor resets it; ticks
//     are per name.
//   - Validation: every rule of lockprovider's Validate methods (name, owner,
//     LockedBy, Tick, durations) on Acquire, Extend, Release, and name rules
//     on Inspect and NotifyRelease, returns a *lockprovider.ValidationError
//     matching the right sentinel and ErrInvalid, and changes nothing (C15);
//     limit values and names with characters special to Redis keys, SQL and
//     shells work.
//   - Context: a cancelled context and one past its deadline make Acquire,
//     Extend and Release return an error matching the context's error, and
//     leave no lease behind (or the lease unchanged).
//   - Exclusion: 100 goroutines race for one free name and exactly one wins;
//     workers on two names complete read-sleep-write increments of counters
//     protected only by the lease, with exact final counts, no overlapping
//     holders and increasing fences (C7), also with AtLeastFor.
//   - Notify (providers implementing lockprovider.ReleaseNotifier; skipped,
//     with a message, otherwise): a registration is signalled by each
//     release, stop unregisters and is idempotent, other names do not
//     signal, and an unread channel blocks nothing. A registration must be
//     in effect when NotifyRelease returns.
//   - Inspect (providers implementing lockprovider.Inspector; skipped
//     otherwise): unknown names read Exists false; Held, LockedBy, GrantedAt,
//     Until, Token and LastTick follow a lease through grant, extend,
//     release and the next grant; List reports exactly this provider's
//     names, once each.
//
// # What providers test themselves
//
// Storage-specific items need access the suite does not have, so provider
// packages test them: a caller's open transaction around lock calls (C8),
// a local "row exists" cache (C13, not used by our providers), pre-existing
// stale rows and untouched neighbouring rows at the storage level (C14, C16,
// C17, C18 beyond the behaviour checked here), times stored in UTC
// whatever the process time zone (C19), and a skewed client clock (C21).
// Handles in lockprovider are owner tokens that Extend keeps, so ShedLock's
// single-use handles (C12) reduce to the stale-owner checks above. Keep-alive
// and executor behaviour (C24, C25) belong to package baton and scheduler.
//
// # Timing
//
// Leases in the suite last 50 ms to a few hundred ms, and waits poll every
// few milliseconds up to a limit, so a provider's run takes seconds. Lease
// times come from the backend's clock, which the suite assumes runs on the
// test machine or in step with it. A timing-dependent check that a busy
// machine made inconclusive is repeated with longer leases rather than
// passed or failed.
package lockprovidertest
