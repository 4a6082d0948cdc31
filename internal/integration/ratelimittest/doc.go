// Package ratelimittest holds the rate limiter's tests, which run each case on the memory, Redis and PostgreSQL providers. They live here, not beside the package, because
// `go mod tidy` in a module that imports it also loads its tests: kept
// there, they would make every user download drivers the application
// does not use. Nothing imports this package.
package ratelimittest
