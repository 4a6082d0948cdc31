// Package check is the one argument prologue of the providers' methods: a
// nil context first (batontype.ErrNilContext), then the input checks in
// the order given, so that every provider rejects the same call with the
// same error.
//
// The checks are passed as evaluated errors, so each must be safe to
// evaluate whatever the others find (the lockprovider Validate functions
// and methods are pure). A check that needs the context, such as
// ctx.Err(), stays with the caller: it must not run on a nil context.
package check
