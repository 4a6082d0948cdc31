package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	redisOnce sync.Once
	redisURL  string
	redisErr  error
)

// RedisURL returns the URL of the shared Redis for this test binary.
func RedisURL(t testing.TB) string {
	t.Helper()
	redisOnce.Do(func() { redisURL, redisErr = resolveRedis() })
	if redisErr != nil {
		t.Fatalf("testenv: no Redis: %v\nSet TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0), or install redis-server, "+
			"or run the tests in containers with `make test-docker` (needs a Docker engine).", redisErr)
	}
	return redisURL
}

func resolveRedis() (string, error) {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u, nil
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "", errors.New("TEST_REDIS_URL unset and redis-server not on PATH")
	}
	dir, err := os.MkdirTemp("", "baton-redis-")
	if err != nil {
		return "", err
	}
	s := &RedisServer{dir: dir, Port: freePortNoT()}
	err = s.start()
	for i := 0; err != nil && i < 4; i++ { // the port was taken meanwhile
		s.Port = freePortNoT()
		err = s.start()
	}
	if err != nil {
		return "", err
	}
	atExit(func() { s.Kill(); _ = os.RemoveAll(dir) })
	return s.URL(), nil
}

// RedisServer is a private redis-server process on a loopback port.
type RedisServer struct {
	Port int
	Args []string // extra arguments, e.g. "--cluster-enabled", "yes"
	dir  string
	cmd  *exec.Cmd
	mu   sync.Mutex
}

// StartRedis starts a private redis-server for this test (no persistence)
// and stops it when the test ends.
func StartRedis(t testing.TB, args ...string) *RedisServer {
	t.Helper()
	s := startRedis(t, func() []string { return args })
	t.Cleanup(s.Kill)
	return s
}

// startRedis starts a server on a fresh port, retrying with other ports
// when the chosen one was taken meanwhile. args is called per attempt, so
// it may pick fresh ports of its own.
func startRedis(t testing.TB, args func() []string) *RedisServer {
	t.Helper()
	var err error
	for range 5 {
		s := &RedisServer{dir: t.TempDir(), Port: FreePort(t), Args: args()}
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatalf("testenv: start redis-server: %v", err)
	return nil
}

// Addr is host:port.
func (s *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL is the redis:// URL of database 0.
func (s *RedisServer) URL() string { return "redis://" + s.Addr() + "/0" }

func (s *RedisServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := append([]string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}, s.Args...)
	cmd := exec.Command("redis-server", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := waitOwnRedis(s.Addr(), cmd.Process.Pid, exited, 10*time.Second); err != nil {
		_ = cmd.Process.Kill()
		return err
	}
	s.cmd = cmd
	return nil
}

// waitOwnRedis waits until the redis-server with process id pid answers on
// addr. Answering on the port is not enough: a port found free a moment ago
// may have been taken by another process (another test's server, or a
// cluster bus port), and our server then exits.
func waitOwnRedis(addr string, pid int, exited <-chan struct{}, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited at start (port taken?)", addr)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, err := redisString(ctx, addr, "INFO", "server")
		cancel()
		if err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(pid)+"\r\n") {
				return nil
			}
			err = errors.New("another process answers on the port")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready within %v: %w", addr, limit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the server at once (SIGKILL); its data is lost.
func (s *RedisServer) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
		_ = s.cmd.Process.Kill()
		waitGone(s.Addr())
		s.cmd = nil
	}
}

// Restart kills the server and starts a new one on the same port, as a
// restart without persistence would.
func (s *RedisServer) Restart() error {
	s.Kill()
	return s.start()
}

// Pause stops the process (SIGSTOP) without closing its connections.
func (s *RedisServer) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused process.
func (s *RedisServer) Resume() { s.signal(syscall.SIGCONT) }

func (s *RedisServer) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Ping reports whether the server answers.
func (s *RedisServer) Ping(ctx context.Context) error {
	_, err := redisDo(ctx, s.Addr(), "PING")
	return err
}
