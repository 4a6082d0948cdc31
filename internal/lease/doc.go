// Package lease is the one implementation of a held lease that package
// baton (Lock) and package scheduler (the lease of a run) are built on:
//
//   - the trust window: the holder's own estimate of when the lease ends,
//     on its monotonic clock, anchored at the send of the acquire or
//     extension that produced the grant and shortened by a safety margin
//     (Margin), so that the window ends before the lease does on the
//     backend even when timers fire late;
//   - extension, where ErrNotHeld means the lease is lost;
//   - auto-renew, every third of the lease length counted from the
//     previous renewal's send, retrying failures promptly within the
//     window;
//   - loss as the cause of a context (matching ErrLockLost), both when the
//     window's timer fires and, synchronously, when Check finds the window
//     passed;
//   - release bookkeeping, which tells a lost reply to an earlier release
//     from a lease that lapsed.
//
// The context of a Lease carries it, so that writers given that context
// (package fence) can call Check before they write.
package lease
