// Package pgfencetest holds the tests of package pgfence whose lock holder
// is on Redis or MySQL (a fenced write to PostgreSQL under a Redis or MySQL
// lock). They live here, not beside the package, because `go mod tidy` in
// a module that imports it also loads its tests: kept there, they would
// make every user download drivers the application does not use. Nothing
// imports this package.
package pgfencetest
