// Package memory is an in-process lockprovider.Provider: leases live in a map
// guarded by a mutex. It serves single-process programs, examples, and tests
// of packages built on lockprovider that should not need a server. It is the
// reference implementation of the contract and passes lockprovidertest.Run.
//
// Its "server clock" is Config.Now (time.Now by default), so inside a
// testing/synctest bubble leases expire on the bubble's fake clock.
//
// Semantics, as for every provider: Acquire grants a free or expired name
// and is idempotent for the owner that holds it; Extend and Release act only
// for the owner token of the live lease and otherwise return
// batontype.ErrNotHeld; Release before AtLeastUntil keeps the lease until
// then; fencing tokens count up per name from 1 and never repeat, across
// release and expiry; the newest tick granted per name is remembered and a
// tick that is not newer is refused with batontype.ErrStaleTick. A done
// context returns its error and changes nothing.
//
// The provider also implements lockprovider.ReleaseNotifier (a non-blocking
// send on every registered channel when a release frees a name; no
// goroutines) and lockprovider.Inspector, and the operator capabilities,
// lockprovider.Control included (paused flags and run requests in the
// map; change announcements are non-blocking sends, like releases).
//
// A record is kept for every name ever granted, so that its fencing counter
// and newest tick survive; memory grows with the number of distinct names,
// which suits job and lock names but not unbounded, per-request names.
package memory
