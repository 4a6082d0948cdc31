// Package statustest holds the status page's tests against Redis and PostgreSQL. They live here, not beside the package, because
// `go mod tidy` in a module that imports it also loads its tests: kept
// there, they would make every user download drivers the application
// does not use. Nothing imports this package.
package statustest
