// Package leadertest holds the tests of package leader that run against Redis and PostgreSQL, worker processes among them. They live here, not beside the package, because
// `go mod tidy` in a module that imports it also loads its tests: kept
// there, they would make every user download drivers the application
// does not use. Nothing imports this package.
package leadertest
