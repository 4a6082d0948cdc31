// Package robusttest is the etcd provider's part of the seeded robustness
// run (see internal/robust of the main module), here because the etcd
// provider is a module of its own.
package robusttest
