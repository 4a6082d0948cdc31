package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/sqldb"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// rawShedLockMySQL is a ShedLock-style lock on ShedLock's MySQL table, in
// DB time, through the same driver as the provider: one INSERT … ON
// DUPLICATE KEY UPDATE to acquire (lock_until assigned last, so every
// condition reads its old value), one UPDATE to release; no owner token,
// no fence, no notification.
const (
	rawShedLockMySQLTable = `CREATE TABLE IF NOT EXISTS shedlock (
	name VARCHAR(64) NOT NULL PRIMARY KEY,
	lock_until TIMESTAMP(3) NOT NULL,
	locked_at TIMESTAMP(3) NOT NULL,
	locked_by VARCHAR(255) NOT NULL)`
	rawShedLockMySQLAcquire = `INSERT INTO shedlock (name, lock_until, locked_at, locked_by)
	VALUES (?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(3), ?)
	ON DUPLICATE KEY UPDATE
	locked_by = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(locked_by), locked_by),
	locked_at = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(locked_at), locked_at),
	lock_until = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(lock_until), lock_until)`
	rawShedLockMySQLRelease = `UPDATE shedlock SET lock_until = UTC_TIMESTAMP(3) WHERE name = ? AND locked_by = ?`
)

// mysqlLockComparison is the lock cycle on MySQL; serverPid, when not 0,
// is the private server's process, whose CPU time and statement counters
// are then reported per operation.
func mysqlLockComparison(e *env, p *mysql.Provider, db *sql.DB, serverPid int) comparison {
	rawCycle := func(acquire, release func(ctx context.Context, args ...any) (sql.Result, error)) func(ctx context.Context, w int) error {
		return func(ctx context.Context, w int) error {
			name := workerNames[w]
			res, err := acquire(ctx, name, leaseLen.Microseconds(), "bench")
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return errLost
			}
			_, err = release(ctx, name, "bench")
			return err
		}
	}
	// The raw statements prepared the way the provider prepares its own.
	prep := sqldb.NewPrepared(db, rawShedLockMySQLAcquire, rawShedLockMySQLRelease)
	exec := func(db sqldb.DB, q string) func(ctx context.Context, args ...any) (sql.Result, error) {
		return func(ctx context.Context, args ...any) (sql.Result, error) { return db.ExecContext(ctx, q, args...) }
	}
	c := comparison{
		id:    "lock-mysql",
		title: "Lock acquire + release on MySQL / MariaDB",
		note: "Each goroutine locks a name of its own. raw = a ShedLock-style INSERT … ON DUPLICATE KEY UPDATE and UPDATE " +
			"through go-sql-driver/mysql (no owner token, no fencing token, no lease times, no notification), sent as text with " +
			"interpolateParams, as ShedLock's JDBC provider sends it by default (Connector/J prepares on the client). The provider " +
			"runs its acquire and release as server-side prepared statements, prepared once per connection; \"raw ShedLock, " +
			"prepared\" does the same with the raw statements. On a private server, server CPU is the mariadbd process's (/proc), and " +
			"commands/op its Com_ statement counters (statements inside a procedure included; a prepared statement's execution " +
			"counts as its statement).",
		concs: e.concs,
		contenders: []contender{
			{"baton provider", providerCycle(p)},
			{"raw ShedLock", rawCycle(exec(db, rawShedLockMySQLAcquire), exec(db, rawShedLockMySQLRelease))},
			{"raw ShedLock, prepared", rawCycle(exec(prep, rawShedLockMySQLAcquire), exec(prep, rawShedLockMySQLRelease))},
		},
		ratios: []ratio{{"baton provider", "raw ShedLock", 0.95}, {"baton provider", "raw ShedLock, prepared", 0}},
	}
	if serverPid > 0 {
		c.server = mysqlServerStats(db, serverPid)
	}
	return c
}

// mysqlServerStats reads, in the form commandStats gives for Redis, the
// server's statement counters (Com_call_procedure, Com_insert, ...) and,
// as "_cpu", the CPU time of its process pid.
func mysqlServerStats(db *sql.DB, pid int) func(ctx context.Context) (map[string]cmdStat, error) {
	stat := "/proc/" + strconv.Itoa(pid) + "/stat"
	return func(ctx context.Context) (map[string]cmdStat, error) {
		rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN "+
			"('Com_call_procedure', 'Com_insert', 'Com_update', 'Com_select', 'Com_delete', 'Com_set_option')")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		m := map[string]cmdStat{}
		for rows.Next() {
			var (
				k string
				v float64
			)
			if err := rows.Scan(&k, &v); err != nil {
				return nil, err
			}
			m[strings.ToLower(strings.TrimPrefix(k, "Com_"))] = cmdStat{calls: v}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(stat)
		if err != nil {
			return nil, err
		}
		// Fields after the command's closing parenthesis: utime and stime
		// are the 12th and 13th, in clock ticks (USER_HZ, 100 on Linux).
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			return nil, errors.New("short " + stat)
		}
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		m["_cpu"] = cmdStat{usec: (ut + st) * 1e4}
		return m, nil
	}
}

// mysqlHandoffPolls are the PollIntervals of the MySQL hand-off
// contenders: the default and the least allowed.
var mysqlHandoffPolls = []time.Duration{mysql.DefaultPollInterval, 5 * time.Millisecond}

// runMySQLHandoff is the hand-off comparison on MySQL / MariaDB: baton's
// Locker at each of mysqlHandoffPolls, each waiter with a provider (so a
// poller) of its own, as if each were a process, on the shared handle.
func runMySQLHandoff(ctx context.Context, log *slog.Logger, db *sql.DB, rounds int, d time.Duration) (result, error) {
	var impls []handoffImpl
	for _, poll := range mysqlHandoffPolls {
		lockers := make([]*baton.Locker, waiters)
		for w := range lockers {
			p, err := mysql.New(db, &mysql.Config{PollInterval: poll})
			if err != nil {
				return result{}, err
			}
			if lockers[w], err = baton.NewLocker(p, &baton.Config{LockedBy: "bench", AtMostFor: leaseLen}); err != nil {
				return result{}, err
			}
		}
		// A name per round: an Acquire cut by the round's end may have
		// been granted all the same (its outcome unknown), and that lease
		// would keep the next round's waiters out for leaseLen.
		var round atomic.Int64
		impls = append(impls, handoffImpl{"baton Locker, PollInterval " + poll.String(), func(w int) func(context.Context) (func(context.Context) error, error) {
			if w == 0 {
				round.Add(1)
			}
			name := "handoff-" + poll.String() + "-" + strconv.FormatInt(round.Load(), 10)
			return func(ctx context.Context) (func(context.Context) error, error) {
				l, err := lockers[w].Acquire(ctx, name, nil)
				if err != nil {
					return nil, err
				}
				return l.Release, nil
			}
		}})
	}
	c := comparison{
		id:    "handoff-mysql",
		title: "Contended hand-off on MySQL / MariaDB (one name, 16 waiters)",
		note: "As the Redis hand-off: 16 waiters, each with a provider of its own, contend for one name; each holder keeps it 2 ms, releases, " +
			"and waits for another waiter to take it. MySQL has no LISTEN/NOTIFY: each provider polls the release counters of the names it " +
			"waits on every PollInterval (default " + mysql.DefaultPollInterval.String() + "), so a release reaches the waiters after " +
			"up to one interval, half of one on average.",
	}
	return runHandoffCmp(ctx, log, c, impls, rounds, d)
}

// setupMySQL opens dsn (or, when it is empty, a private server started
// from the mariadbd binary bin) with interpolateParams, creates a
// database of the run's own, and migrates a provider in it.
func setupMySQL(ctx context.Context, dsn, bin string, conns int) (p *mysql.Provider, db *sql.DB, serverPid int, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if dsn == "" {
		if bin == "" {
			return nil, nil, 0, stop, errors.New("no -mysql DSN and no mariadbd binary")
		}
		var s func()
		if dsn, serverPid, s, err = privateMySQL(ctx, bin); err != nil {
			return nil, nil, 0, stop, err
		}
		stops = append(stops, s)
	}
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, 0, stop, err
	}
	name := "benchrun_" + strconv.Itoa(os.Getpid())
	cfg.InterpolateParams = true
	admin, err := openMySQL(cfg)
	if err != nil {
		return nil, nil, 0, stop, err
	}
	stops = append(stops, func() { _ = admin.Close() })
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+name); err != nil {
		return nil, nil, 0, stop, fmt.Errorf("mysql at %s: %w", cfg.Addr, err)
	}
	stops = append(stops, func() { _, _ = admin.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE "+name) })
	cfg.DBName = name
	if db, err = openMySQL(cfg); err != nil {
		return nil, nil, 0, stop, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	stops = append(stops, func() { _ = db.Close() })
	if _, err := db.ExecContext(ctx, rawShedLockMySQLTable); err != nil {
		return nil, nil, 0, stop, err
	}
	if p, err = mysql.New(db, nil); err != nil {
		return nil, nil, 0, stop, err
	}
	if err := p.Migrate(ctx); err != nil {
		return nil, nil, 0, stop, err
	}
	return p, db, serverPid, stop, nil
}

func openMySQL(cfg *gomysql.Config) (*sql.DB, error) {
	c, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// findMariadbd returns the mariadbd binary on the PATH or in /usr/sbin,
// or "".
func findMariadbd() string {
	if p, err := exec.LookPath("mariadbd"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/mariadbd"); err == nil {
		return "/usr/sbin/mariadbd"
	}
	return ""
}

// privateMySQL initialises and starts a MariaDB server of the run's own on
// a free loopback port (root without a password). stop ends it and
// removes its data.
func privateMySQL(ctx context.Context, bin string) (dsn string, pid int, stop func(), err error) {
	install := filepath.Join(filepath.Dir(bin), "mariadb-install-db")
	if _, err := os.Stat(install); err != nil {
		if install, err = exec.LookPath("mariadb-install-db"); err != nil {
			return "", 0, nil, errors.New("mariadb-install-db not found next to " + bin + " nor on the PATH")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", 0, nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir, err := os.MkdirTemp("", "benchrun-mysql-")
	if err != nil {
		return "", 0, nil, err
	}
	data := filepath.Join(dir, "data")
	user := []string{}
	if os.Geteuid() == 0 {
		user = []string{"--user=root"} // a private server has no reason to switch users
	}
	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}, user...)
	if out, err := exec.CommandContext(ctx, install, args...).CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return "", 0, nil, fmt.Errorf("%s: %v: %s", install, err, out)
	}
	args = append([]string{"--no-defaults", "--datadir=" + data, "--bind-address=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--socket=" + filepath.Join(dir, "sock"), "--pid-file=" + filepath.Join(dir, "pid"),
		"--log-error=" + filepath.Join(dir, "error.log"), "--skip-name-resolve", "--max-connections=300"}, user...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return "", 0, nil, err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			_ = c.Close()
			return "root@tcp(" + addr + ")/", cmd.Process.Pid, stop, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			stop()
			return "", 0, nil, fmt.Errorf("%s on port %d did not accept connections:\n%s", bin, port, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
