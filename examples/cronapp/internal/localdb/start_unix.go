//go:build linux || darwin || freebsd

package localdb

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// StartRedis starts redis-server without persistence on a free loopback
// port.
func StartRedis() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("%w: redis-server not on PATH", ErrNoBinaries)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cronapp-redis-")
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &Server{Name: "redis-server", URL: "redis://" + addr + "/0", dir: dir}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.start(cmd, addr); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// StartPostgres initialises a cluster in a temporary directory and starts
// postgres on a free loopback port (trust authentication, user postgres,
// database postgres). PostgreSQL refuses to run as root, so as root it runs
// as the postgres user.
func StartPostgres() (*Server, error) {
	bindir, err := postgresBindir()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cronapp-pg-")
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &Server{Name: "postgres", URL: "postgres://postgres@" + addr + "/postgres?sslmode=disable", dir: dir}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("running as root, and there is no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			s.Stop()
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			s.Stop()
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	cmd := exec.Command(filepath.Join(bindir, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	if err := s.start(cmd, addr); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }
