// Package notify is the in-process side of release notification that every
// provider shares: the registrations of waiting callers by key, the
// fan-out of a signal to them, and the reconnect backoff of the transport
// that feeds it. Each provider feeds a Hub from its own transport (Redis
// pub/sub, PostgreSQL LISTEN, an etcd watch, polling) and starts and stops
// that transport from the hooks of Add and Remove.
//
// Contract:
//   - A signal is a non-blocking send on each channel registered under the
//     key: a waiter whose buffer is full has a signal pending already, and
//     the sender never waits for a slow receiver.
//   - The hooks of Add and Remove run under the hub's lock, so a transport
//     started by the first registration and stopped by the last cannot
//     interleave with another registration. A hook must not call the hub;
//     it may take the caller's own lock, provided the caller never calls
//     the hub while holding that lock.
//   - The package imports no driver.
package notify
