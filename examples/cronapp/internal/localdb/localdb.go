// Package localdb starts private Redis, PostgreSQL and MariaDB servers from the
// binaries installed on this machine, for the demo runner when nothing
// answers on the usual local addresses. (Tests use internal/testenv, which
// does the same for test binaries.)
package localdb

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoBinaries means the server binaries are not installed.
var ErrNoBinaries = errors.New("localdb: server binaries not found")

// Server is a private server process listening on a loopback port.
type Server struct {
	URL  string
	Name string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Stop ends the server (SIGTERM, then SIGKILL after 10s) and removes its
// files.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		terminate(s.cmd)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	_ = os.RemoveAll(s.dir)
}

// start runs cmd with its output in dir/name.log and waits until addr
// accepts connections.
func (s *Server) start(cmd *exec.Cmd, addr string) error {
	logf, err := os.Create(filepath.Join(s.dir, s.Name+".log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(filepath.Join(s.dir, s.Name+".log"))
			return fmt.Errorf("%s exited at start-up: %s", s.Name, strings.TrimSpace(string(out)))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on %s within 30s", s.Name, addr)
		}
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// postgresBindir finds initdb and postgres.
func postgresBindir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) > 0 {
		return filepath.Dir(m[len(m)-1]), nil // the newest version sorts last
	}
	return "", fmt.Errorf("%w: initdb (pg_config --bindir, PATH, /usr/lib/postgresql/*/bin)", ErrNoBinaries)
}
