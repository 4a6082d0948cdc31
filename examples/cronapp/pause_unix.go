//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSelf freezes the whole process (SIGSTOP) until someone sends
// SIGCONT. It reports false if the signal could not be sent.
func stopSelf() bool {
	return syscall.Kill(os.Getpid(), syscall.SIGSTOP) == nil
}
