// Package pglease holds what the native PostgreSQL provider
// (lockprovider/postgres) and the ShedLock-compatible one
// (lockprovider/shedlock) do alike with a lease row through pgx: extending
// and releasing it with their own statements, and telling a refusal by
// another session from a failure. Each provider keeps its SQL and wraps
// failures with its own prefix (the wrap functions).
//
// The statements' contract: an extension takes $1 name, $2 owner,
// $3 AtMostFor and $4 AtLeastFor and returns no row when the lease is not
// held, else granted at, until, at-least-until, token and newest tick
// (NULL for none); a release takes $1 name and $2 owner and changes no row
// when the lease is not held.
//
// The package is specific to pgx and imports no other driver.
package pglease
