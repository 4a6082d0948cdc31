package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RedisSentinel is a private Sentinel setup: a master, one replica and one
// sentinel monitoring the master, all redis-server processes on loopback
// ports.
type RedisSentinel struct {
	Addr       string // the sentinel's host:port
	MasterName string
	Master     *RedisServer // the master at start; a failover swaps the roles
	Replica    *RedisServer
}

// StartRedisSentinel starts a master, a replica of it and a sentinel that
// monitors the master with quorum 1 and short timeouts (down after 500 ms,
// failover timeout 2 s, INFO and hello every 200 ms). It returns once the replica's link is up and the
// sentinel reports the master and knows the replica, so SENTINEL FAILOVER
// can succeed at once. Everything stops when the test ends.
func StartRedisSentinel(t testing.TB) *RedisSentinel {
	t.Helper()
	s := &RedisSentinel{MasterName: "mymaster"}
	// A diskless full sync waits 5 s for more replicas by default.
	s.Master = StartRedis(t, "--repl-diskless-sync-delay", "0")
	s.Replica = StartRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(s.Master.Port))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Wait for the link first: the sentinel learns of replicas from the
	// master's INFO, and finds this one at once only if it is connected.
	if err := poll(ctx, func() (bool, error) {
		info, err := redisString(ctx, s.Replica.Addr(), "INFO", "replication")
		return strings.Contains(info, "master_link_status:up"), err
	}); err != nil {
		t.Fatalf("testenv: replica link not up: %v", err)
	}

	var err error
	var sp *sentinelProc
	for range 5 {
		if sp, err = startSentinel(t.TempDir(), FreePort(t), s.MasterName, s.Master.Port); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("testenv: start sentinel: %v", err)
	}
	t.Cleanup(sp.kill)
	s.Addr = sp.addr

	// The default periods make a failover slow to complete: INFO every
	// 10 s, and an old master is demoted only after it has reported its
	// stale role for 4 publish periods (8 s).
	if _, err := redisDo(ctx, s.Addr, "SENTINEL", "DEBUG", "info-period", 200, "publish-period", 200); err != nil {
		t.Fatalf("testenv: SENTINEL DEBUG info-period: %v", err)
	}
	if err := poll(ctx, func() (bool, error) {
		addr, err := redisDo(ctx, s.Addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.MasterName)
		if a, ok := addr.([]any); err != nil || !ok || len(a) != 2 || a[1] != strconv.Itoa(s.Master.Port) {
			return false, err
		}
		replicas, err := redisDo(ctx, s.Addr, "SENTINEL", "REPLICAS", s.MasterName)
		if err != nil {
			return false, err
		}
		list, _ := replicas.([]any)
		for _, fields := range list {
			r := pairs(fields)
			if r["port"] == strconv.Itoa(s.Replica.Port) && r["flags"] == "slave" && r["master-link-status"] == "ok" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("testenv: sentinel does not know master and replica: %v", err)
	}
	return s
}

type sentinelProc struct {
	addr string
	cmd  *exec.Cmd
}

func startSentinel(dir string, port int, name string, masterPort int) (*sentinelProc, error) {
	// The sentinel rewrites its config file, so it lives in dir.
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
		"sentinel monitor %s 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds %s 500\n"+
		"sentinel failover-timeout %s 2000\n",
		port, dir, filepath.Join(dir, "sentinel.log"), name, masterPort, name, name)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command("redis-server", conf, "--sentinel")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitOwnRedis(addr, cmd.Process.Pid, exited, 10*time.Second); err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	return &sentinelProc{addr: addr, cmd: cmd}, nil
}

func (p *sentinelProc) kill() {
	_ = p.cmd.Process.Kill()
	waitGone(p.addr)
}

// poll calls f every 20 ms until it reports done or ctx ends; the last
// error is part of a timeout's error.
func poll(ctx context.Context, f func() (bool, error)) error {
	for {
		done, err := f()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pairs turns a flat [field, value, ...] reply into a map.
func pairs(reply any) map[string]string {
	list, _ := reply.([]any)
	m := make(map[string]string, len(list)/2)
	for i := 0; i+1 < len(list); i += 2 {
		k, _ := list[i].(string)
		v, _ := list[i+1].(string)
		m[k] = v
	}
	return m
}
