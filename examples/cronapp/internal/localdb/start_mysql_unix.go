//go:build linux || darwin || freebsd

package localdb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// StartMySQL initialises a MariaDB (or MySQL) data directory in a
// temporary directory and starts the server on a free loopback port, user
// root without a password. Its URL is a go-sql-driver DSN without a
// database: the caller creates the one it uses. The server refuses to run
// as root unless told to, which a private throwaway server may be.
func StartMySQL() (*Server, error) {
	server, install, err := mysqlBinaries()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cronapp-mysql-")
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &Server{Name: filepath.Base(server), URL: "root@tcp(" + addr + ")/", dir: dir}
	data := filepath.Join(dir, "data")
	asRoot := os.Geteuid() == 0
	// Normal authentication for root (not the unix_socket plugin), so TCP
	// works without a password.
	args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve"}
	if asRoot {
		args = append(args, "--user=root")
	}
	initdb := exec.Command(install, args...)
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%s: %v: %s", filepath.Base(install), err, out)
	}
	args = []string{"--no-defaults", "--datadir=" + data, "--bind-address=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--socket=" + filepath.Join(dir, "sock"), "--pid-file=" + filepath.Join(dir, "pid"),
		"--skip-name-resolve", "--innodb-buffer-pool-size=64M",
		// A demo needs no durability beyond a process crash.
		"--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--innodb-doublewrite=0"}
	if asRoot {
		args = append(args, "--user=root")
	}
	cmd := exec.Command(server, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.start(cmd, addr); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// mysqlBinaries finds the server and its bootstrap script: MariaDB's
// names first (Debian's mariadb-server), then MySQL's.
func mysqlBinaries() (server, install string, err error) {
	for _, pair := range [][2]string{{"mariadbd", "mariadb-install-db"}, {"mysqld", "mysql_install_db"}} {
		srv, e1 := lookSbin(pair[0])
		inst, e2 := lookSbin(pair[1])
		if e1 == nil && e2 == nil {
			return srv, inst, nil
		}
	}
	return "", "", fmt.Errorf("%w: mariadbd and mariadb-install-db (PATH, /usr/sbin, /usr/bin; Debian: apt-get install mariadb-server)", ErrNoBinaries)
}

// lookSbin finds name on PATH or in the sbin directories, which a user's
// PATH often lacks.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
