package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error
)

// PostgresURL returns the URL of the shared PostgreSQL for this test binary.
func PostgresURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() { pgURL, pgErr = resolvePostgres() })
	if pgErr != nil {
		t.Fatalf("testenv: no PostgreSQL: %v\nSet TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable), "+
			"or install the PostgreSQL server binaries (initdb, postgres, pg_isready), "+
			"or run the tests in containers with `make test-docker` (needs a Docker engine).", pgErr)
	}
	return pgURL
}

func resolvePostgres() (string, error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	bindir, err := pgBindir()
	if err != nil {
		return "", fmt.Errorf("TEST_DATABASE_URL unset and no PostgreSQL server binaries: %w", err)
	}
	s, err := newPostgresServer(bindir, freePortNoT())
	if err != nil {
		return "", err
	}
	if err := s.start(); err != nil {
		s.cleanup()
		return "", err
	}
	atExit(func() { s.Kill(); s.cleanup() })
	return s.URL(), nil
}

func pgBindir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	return "", fmt.Errorf("initdb not found (pg_config --bindir, /usr/lib/postgresql/*/bin)")
}

// PostgresServer is a private PostgreSQL server on a loopback port.
type PostgresServer struct {
	Port   int
	bindir string
	dir    string // data directory's parent; removed by cleanup
	cred   *syscall.Credential
	mu     sync.Mutex
	cmd    *exec.Cmd
}

// StartPostgres initialises and starts a private PostgreSQL server for this
// test and stops it when the test ends. It takes a few seconds.
func StartPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	bindir, err := pgBindir()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	s, err := newPostgresServer(bindir, FreePort(t))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { s.Kill(); s.cleanup() })
	if err := s.start(); err != nil {
		t.Fatalf("testenv: start postgres: %v", err)
	}
	return s
}

func newPostgresServer(bindir string, port int) (*PostgresServer, error) {
	dir, err := os.MkdirTemp("", "baton-pg-")
	if err != nil {
		return nil, err
	}
	s := &PostgresServer{Port: port, bindir: bindir, dir: dir}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(filepath.Join(bindir, "initdb"), "-D", s.data(), "-U", "postgres",
		"-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	return s, nil
}

func (s *PostgresServer) data() string { return filepath.Join(s.dir, "data") }

func (s *PostgresServer) cleanup() { _ = os.RemoveAll(s.dir) }

// Addr is host:port.
func (s *PostgresServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL connects to database postgres as user postgres.
func (s *PostgresServer) URL() string {
	return "postgres://postgres@" + s.Addr() + "/postgres?sslmode=disable"
}

func (s *PostgresServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(filepath.Join(s.bindir, "postgres"), "-D", s.data(),
		"-p", strconv.Itoa(s.Port), "-k", s.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", // a process crash keeps the OS page cache, so committed data survives Kill
		"-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	logf, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	s.cmd = cmd
	go func() { _ = cmd.Wait(); logf.Close() }()
	if err := waitTCP(s.Addr(), 30*time.Second); err != nil {
		return err
	}
	// Accepting TCP is not yet accepting queries (startup, recovery);
	// pg_isready asks the server, so the harness needs no client library.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		out, err := exec.CommandContext(ctx, filepath.Join(s.bindir, "pg_isready"), "-q", "-t", "1",
			"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", "postgres", "-d", "postgres").CombinedOutput()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
			return fmt.Errorf("postgres not ready: %v %s\n%s", err, out, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the server at once (SIGKILL to its process group), as a crash.
func (s *PostgresServer) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		signalTree(s.cmd.Process.Pid, syscall.SIGCONT)
		signalTree(s.cmd.Process.Pid, syscall.SIGKILL)
		waitGone(s.Addr())
		// The shared memory segment outlives a killed postmaster briefly.
		time.Sleep(50 * time.Millisecond)
		s.cmd = nil
	}
}

// Restart kills the server and starts it again on the same data (crash
// recovery), keeping committed data.
func (s *PostgresServer) Restart() error {
	s.Kill()
	_ = os.Remove(filepath.Join(s.data(), "postmaster.pid"))
	return s.start()
}

// Pause stops every server process (SIGSTOP) without closing connections.
func (s *PostgresServer) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues paused server processes.
func (s *PostgresServer) Resume() { s.signal(syscall.SIGCONT) }

// signal sends sig to the postmaster and to each of its children. The
// children (backends, checkpointer, …) call setsid, so each is a process
// group of its own: a signal to the postmaster's group misses them, and a
// "paused" server would go on answering on open connections.
func (s *PostgresServer) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		signalTree(s.cmd.Process.Pid, sig)
	}
}

// signalTree signals the postmaster, then its children: those listed before
// (a killed postmaster's children are soon adopted by another parent) and
// after (a child forked meanwhile).
func signalTree(pid int, sig syscall.Signal) {
	kids := children(pid)
	_ = syscall.Kill(-pid, sig)
	for _, c := range append(kids, children(pid)...) {
		_ = syscall.Kill(c, sig)
	}
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may contain spaces and parens.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}
