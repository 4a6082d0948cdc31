//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopSelf freezes the whole process (SIGSTOP) until someone sends
// SIGCONT, and returns only after that SIGCONT. Waiting for it matters:
// a stop sent to oneself takes effect asynchronously, and on a busy machine
// the caller could run on (and write) before the process actually stops.
// limit bounds the wait in case no SIGCONT ever comes through to us. It
// reports false if the signal could not be sent.
func stopSelf(limit time.Duration) bool {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
		return false
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-cont:
	case <-t.C:
	}
	return true
}
