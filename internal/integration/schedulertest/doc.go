// Package schedulertest holds the scheduler's tests: those against Redis and PostgreSQL, and those on the memory provider that share their helpers. The one test that needs the scheduler's internals is in the scheduler package. They live here, not beside the package, because
// `go mod tidy` in a module that imports it also loads its tests: kept
// there, they would make every user download drivers the application
// does not use. Nothing imports this package.
package schedulertest
