// Package redisfence fences values in Redis: Guard.Set stores a value only
// for a fencing token not smaller than the one stored with the key,
// checked and written in one Lua script, and Guard.Get reads the value with
// the token that wrote it.
//
// This package imports go-redis and not pgx; package pgfence is its
// PostgreSQL counterpart, and package fence has the errors both return and
// the in-process targets. See package fence for what fencing guarantees,
// and what it needs from Redis: persistence, since a Redis that forgets a
// fence re-admits stale writers.
package redisfence
