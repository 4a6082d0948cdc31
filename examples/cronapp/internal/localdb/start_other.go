//go:build !(linux || darwin || freebsd)

package localdb

import (
	"fmt"
	"os/exec"
	"runtime"
)

// StartRedis is not supported on this platform.
func StartRedis() (*Server, error) {
	return nil, fmt.Errorf("%w: private servers are not supported on %s", ErrNoBinaries, runtime.GOOS)
}

// StartPostgres is not supported on this platform.
func StartPostgres() (*Server, error) {
	return nil, fmt.Errorf("%w: private servers are not supported on %s", ErrNoBinaries, runtime.GOOS)
}

// StartMySQL is not supported on this platform.
func StartMySQL() (*Server, error) {
	return nil, fmt.Errorf("%w: private servers are not supported on %s", ErrNoBinaries, runtime.GOOS)
}

func terminate(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
