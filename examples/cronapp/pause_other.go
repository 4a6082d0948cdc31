//go:build !unix

package main

import "time"

// stopSelf cannot freeze the process on this platform; the caller sleeps.
func stopSelf(time.Duration) bool { return false }
