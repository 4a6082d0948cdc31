// Package pgfence fences rows of a PostgreSQL table through pgx: a write
// applies only for a fencing token not smaller than the largest token that
// wrote the row before, checked and written in one statement.
//
// The table gets a bigint fence column (Guard.AddColumn or AddColumn adds
// it, "last_fence" unless GuardConfig says otherwise). Guard.Update and
// Guard.Exec run
//
//	UPDATE … SET …, last_fence = token WHERE key = … AND COALESCE(last_fence, 0) <= token
//
// as one statement that also tells a stale token (fence.ErrStaleToken)
// from a missing row (fence.ErrNotFound). They take a pool, a connection
// or the caller's pgx.Tx. Guard.Mark raises the row's fence without writing
// anything else, before a read that a later write depends on.
//
// This package imports pgx and not go-redis; package redisfence is its
// Redis counterpart, and package fence has the errors both return and the
// in-process targets. See package fence for what fencing guarantees and
// what it needs from the resource.
package pgfence
