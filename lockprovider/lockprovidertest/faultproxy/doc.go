// Package faultproxy is a TCP proxy for fault tests of lock providers: a
// client connects to the proxy instead of its server, and the test
// delays, blackholes, resets or drops the replies of the traffic while the
// client runs, as a slow or partitioned network would. A request held in
// a blackhole is delivered when the mode changes back, possibly seconds
// after its caller gave up: a history checked with the history package
// then needs history.Config.Delivery at least that long.
//
// It uses nothing but the standard library, so a provider's tests can
// import it without new dependencies.
package faultproxy
