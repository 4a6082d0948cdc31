// Package batontype holds the types that applications, operators and
// tools handle, whatever provider stores them: the errors every package
// of the module returns, run records and outcomes of the run ledger,
// registered instances and job specs, run requests and paused flags,
// lease state as operators see it, rate-limit specs and listed
// rate-limit state, and the validation rules and limits of the values
// they carry (names, durations, keys).
//
// It is a leaf package: it imports only the standard library (and one
// internal arithmetic helper shared with the rate-limit providers), so
// the status page, the CLI and an application can use these types
// without importing the provider contract (package lockprovider), which
// is for provider authors.
//
// # Errors
//
// ErrNotAcquired and ErrStaleTick are definite refusals, returned only
// when the backend said so; ErrNotHeld says the presented owner no
// longer holds the lease; bad input is a *ValidationError matching
// ErrInvalid; a backend that could not be reached or did not answer in
// time is an *UnavailableError matching ErrUnavailable (never
// ErrNotAcquired). Definite tells an answer from an unknown outcome. The
// sentinels' texts carry no package prefix: the caller wraps them once
// with its operation and the name, and a *ValidationError names the
// package that rejected the input.
package batontype
