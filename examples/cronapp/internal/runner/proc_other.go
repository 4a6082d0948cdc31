//go:build !unix

package runner

import "os"

// canFreeze: no SIGSTOP here; the replica sleeps in the job instead.
const canFreeze = false

func resume(*os.Process) {}

// terminate cannot send SIGTERM on this platform: the replica is killed
// and its shutdown is not exercised.
func terminate(p *os.Process) { _ = p.Kill() }
