//go:build unix

package runner

import (
	"os"
	"syscall"
)

// canFreeze: the replicas may SIGSTOP themselves; resume sends SIGCONT.
const canFreeze = true

func resume(p *os.Process) { _ = p.Signal(syscall.SIGCONT) }

func terminate(p *os.Process) { _ = p.Signal(syscall.SIGTERM) }
