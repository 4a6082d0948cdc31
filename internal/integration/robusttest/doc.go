// Package robusttest is the seeded robustness run of the providers of the
// main module (see internal/robust): `make test-robust`, or
// ROBUST_TESTS=1 go test -run TestRobust in this directory.
package robusttest
