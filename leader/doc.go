// Package leader elects one leader among the replicas of a service, on any
// baton provider (Redis, PostgreSQL, etcd, memory, ...).
//
// A leadership is a named lock held with auto-renew: Campaign waits until
// this candidate holds it (woken by the provider's release notifications
// when the leader resigns, polling for one whose lease lapsed), and returns
// a Term. The term's fencing token is the lease's token, larger for every
// term than for all earlier ones; its Context ends when the leadership is
// lost, with a cause matching baton.ErrLockLost, or after Resign, with
// ErrResigned.
//
//	election, err := leader.New(provider, "billing-leader", &leader.Config{AtMostFor: 10 * time.Second})
//	err = election.Run(ctx, func(ctx context.Context, term *leader.Term) error {
//		// Lead until ctx is done; write through the fence guards with
//		// ctx and term.Token().
//	})
//
// Run campaigns again after a lost term and resigns when its function
// returns or its context ends. Leader reports the current leader (its
// LockedBy, token and lease times) on providers that implement
// lockprovider.Inspector. IsLeader answers locally whether this candidate
// leads now; it has the signature of gocron v2's Elector interface.
//
// # At most one leader, with fencing
//
// Leases alone cannot keep two leaders apart at every instant: a leader
// paused (a stopped VM, a long garbage collection) past its lease wakes up
// believing it leads, after another candidate was elected. Its Term notices
// at its first Check or fenced write (the trust window has passed) but not
// during the pause, and a write already on its way is not stopped by any
// check. Give every write that must not come from two leaders the term's
// token and a fence guard (fence/pgfence, fence/redisfence, fence): the
// resource then rejects a deposed leader's writes once the new leader has
// written. Without fencing, leadership is an efficiency measure, as a lock
// is.
//
// # Timing
//
// A leader that resigns is replaced within about one round trip (release
// notifications). One that crashes or is paused is replaced once its lease
// lapses, at most Config.AtMostFor after its last renewal, plus the
// candidates' polling interval (at most baton.DefaultMaxBackoff). A leader
// that cannot renew (the backend is unreachable) gives up its term at the
// end of its trust window, before the lease lapses on the backend.
package leader
