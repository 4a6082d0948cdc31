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
	myOnce sync.Once
	myDSN  string
	myErr  error
)

// MySQLDSN returns the DSN (in go-sql-driver/mysql's form,
// user:password@tcp(host:port)/) of the shared MySQL or MariaDB server for
// this test binary, without a database: tests create one each (see
// mysqlenv). The user must be allowed to create databases and routines.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	myOnce.Do(func() { myDSN, myErr = resolveMySQL() })
	if myErr != nil {
		t.Fatalf("testenv: no MySQL/MariaDB: %v\nSet TEST_MYSQL_DSN (e.g. root@tcp(127.0.0.1:3306)/), "+
			"or install the MariaDB server binaries (Debian: apt-get install mariadb-server; "+
			"the tests start a private server, no system service is needed).", myErr)
	}
	return myDSN
}

func resolveMySQL() (string, error) {
	if u := os.Getenv("TEST_MYSQL_DSN"); u != "" {
		return u, nil
	}
	s, err := newMySQLServer(freePortNoT())
	if err != nil {
		return "", fmt.Errorf("TEST_MYSQL_DSN unset and no private server: %w", err)
	}
	err = s.start()
	for i := 0; err != nil && errors.Is(err, errPortTaken) && i < 4; i++ {
		s.Port = freePortNoT()
		err = s.start()
	}
	if err != nil {
		s.cleanup()
		return "", err
	}
	atExit(func() { s.Kill(); s.cleanup() })
	return s.DSN(), nil
}

// mysqlBinaries finds the server and the bootstrap script: MariaDB's names
// first (Debian's mariadb-server), then MySQL's.
func mysqlBinaries() (server, install string, err error) {
	for _, pair := range [][2]string{{"mariadbd", "mariadb-install-db"}, {"mysqld", "mysql_install_db"}} {
		srv, e1 := lookSbin(pair[0])
		inst, e2 := lookSbin(pair[1])
		if e1 == nil && e2 == nil {
			return srv, inst, nil
		}
	}
	return "", "", errors.New("mariadbd and mariadb-install-db not found (PATH, /usr/sbin, /usr/bin)")
}

func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// MySQLServer is a private MariaDB (or MySQL) server on a loopback port,
// with user root and no password.
type MySQLServer struct {
	Port   int
	server string
	dir    string // data directory's parent; removed by cleanup
	mu     sync.Mutex
	cmd    *exec.Cmd
}

// StartMySQL initialises and starts a private server for this test and
// stops it when the test ends. It takes a few seconds.
func StartMySQL(t testing.TB) *MySQLServer {
	t.Helper()
	s, err := newMySQLServer(FreePort(t))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { s.Kill(); s.cleanup() })
	if err := s.start(); err != nil {
		t.Fatalf("testenv: start mysql: %v", err)
	}
	return s
}

func newMySQLServer(port int) (*MySQLServer, error) {
	server, install, err := mysqlBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "baton-mysql-")
	if err != nil {
		return nil, err
	}
	s := &MySQLServer{Port: port, server: server, dir: dir}
	if err := os.Mkdir(s.tmp(), 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// --user=root: the server refuses to run as root otherwise, and a
	// private server of a test has no reason to switch users. Normal
	// authentication for root (no unix_socket plugin), so TCP works
	// without a password.
	args := []string{"--no-defaults", "--datadir=" + s.data(), "--tmpdir=" + s.tmp(), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	cmd := exec.Command(install, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %v: %s", filepath.Base(install), err, out)
	}
	return s, nil
}

func (s *MySQLServer) data() string { return filepath.Join(s.dir, "data") }

// tmp is the server's own temporary directory. A server deletes every
// "#sql…" file in its tmpdir when it starts, so in a shared one (/tmp) a
// private server starting beside another's bootstrap deleted that
// bootstrap's temporary table and failed it ("Unknown table
// 'mysql.tmp_user_sys'").
func (s *MySQLServer) tmp() string { return filepath.Join(s.dir, "tmp") }

func (s *MySQLServer) cleanup() { _ = os.RemoveAll(s.dir) }

// Addr is host:port.
func (s *MySQLServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// DSN connects as root, without a database.
func (s *MySQLServer) DSN() string { return "root@tcp(" + s.Addr() + ")/" }

var errPortTaken = errors.New("port taken")

func (s *MySQLServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := []string{"--no-defaults", "--datadir=" + s.data(), "--tmpdir=" + s.tmp(),
		"--bind-address=127.0.0.1", "--port=" + strconv.Itoa(s.Port),
		"--socket=" + filepath.Join(s.dir, "sock"), "--pid-file=" + filepath.Join(s.dir, "pid"),
		"--log-error=" + filepath.Join(s.dir, "error.log"),
		"--skip-name-resolve", "--max-connections=300",
		// Tests need no durability beyond a process crash: each commit is
		// written to the OS (flushed to disk once a second), and the OS
		// page cache survives the process.
		"--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--innodb-doublewrite=0",
		"--innodb-buffer-pool-size=64M",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	cmd := exec.Command(s.server, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// The server opens its port only once it accepts connections.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if err := waitTCP(s.Addr(), 100*time.Millisecond); err == nil {
			return nil
		}
		select {
		case <-exited:
			s.cmd = nil
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			if containsAny(string(log), "Address already in use", "Can't start server: Bind") {
				return errPortTaken
			}
			return fmt.Errorf("%s exited at start:\n%s", filepath.Base(s.server), log)
		case <-ctx.Done():
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("%s did not accept connections within 60s:\n%s", filepath.Base(s.server), log)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Kill ends the server at once (SIGKILL), as a crash.
func (s *MySQLServer) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGCONT)
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		waitGone(s.Addr())
		s.cmd = nil
	}
}

// Restart kills the server and starts it again on the same data (crash
// recovery), keeping committed data.
func (s *MySQLServer) Restart() error {
	s.Kill()
	return s.start()
}

// Pause stops the server process (SIGSTOP) without closing connections.
func (s *MySQLServer) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *MySQLServer) Resume() { s.signal(syscall.SIGCONT) }

func (s *MySQLServer) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, sig)
	}
}
