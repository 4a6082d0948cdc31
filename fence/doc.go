// Package fence makes a protected resource reject writes from a lock holder
// whose lease has passed to someone else.
//
// A lease-based lock cannot stop a holder that was paused past its lease
// (garbage collection, a stopped VM, a slow disk, a delayed packet) from
// acting after another process took the lock. Every grant carries a fencing
// token that is larger than the tokens of all earlier grants of the same
// name (baton.Lock.Token, scheduler.Run). The resource remembers the largest
// token that wrote to it and refuses smaller ones, checking and writing in
// one atomic step, so the paused holder's late write fails with
// ErrStaleToken instead of overwriting newer data. Equal tokens are
// accepted: one grant may write many times.
//
// # One lock name per resource
//
// Tokens are comparable only with tokens of the same lock name: each name
// has its own counter. Guard a resource (a row, a key, a value) with one lock
// name, always the same, and pass that lock's token.
//
// # Targets
//
// Each backend has its own package, so that using one does not compile the
// other's driver:
//
//   - package pgfence: PostgreSQL rows through pgx. The table gets a bigint
//     fence column; pgfence.Guard.Update and Exec run "UPDATE … SET …,
//     last_fence = token WHERE key = … AND COALESCE(last_fence, 0) <=
//     token" as one statement that also tells a stale token (ErrStaleToken)
//     from a missing row (ErrNotFound). They take a pool, a connection or
//     the caller's pgx.Tx.
//   - package redisfence: values in Redis hashes, compare-and-set in one Lua
//     script.
//   - this package: Resource and Value for in-process state, under a mutex,
//     and the errors every target returns. It imports no driver.
//
// # The writer's own check
//
// Given the Context of a baton.Lock or a scheduled job's context (or a
// context derived from them), pgfence's Guard.Update, Mark and Exec,
// redisfence's Guard.Set, Resource.DoContext and Value.WriteContext first
// compare the lock's trust window with the clock, and refuse the write
// without sending it (an error matching baton.ErrLockLost) once the window
// has passed, or (matching baton.ErrReleased) once the lock was released,
// a resigned leader's term included. This catches a holder resumed after a pause before the lock's
// own timer runs. It is no substitute for the token check: a pause between
// the check and the write goes unnoticed by the writer, and the token stops
// that write. A context that carries no lock skips the check.
//
// # What fencing needs from the resource
//
// The check and the write must be one atomic step (they are, in each target
// here). A value the write depends on must be fenced too: compute it in the
// SET clause ("stock = stock - $1"), or call pgfence.Guard.Mark before
// reading it, so that an older holder cannot write between your read and
// your write (its write would be accepted, then overwritten by yours: a lost
// update; TestLostUpdateWitness in package pgfence shows Mark closing that
// gap). And the resource must keep the largest token as durably as the data: a
// Redis that restarts without persistence, or a failover to a replica that
// lagged, forgets fences and re-admits stale writers.
package fence
