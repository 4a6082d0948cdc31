//go:build !unix

package main

// stopSelf cannot freeze the process on this platform; the caller sleeps.
func stopSelf() bool { return false }
