package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EtcdCluster is a private etcd cluster: one etcd process per member, each
// on loopback client and peer ports with a data directory of its own. The
// harness talks to etcd only through its JSON gateway, so this package does
// not depend on the etcd client.
type EtcdCluster struct {
	Members []*EtcdMember
	token   string
}

// EtcdMember is one member of an EtcdCluster.
type EtcdMember struct {
	Name       string
	ClientPort int
	PeerPort   int
	dir        string
	cluster    *EtcdCluster
	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
}

// StartEtcdCluster starts a cluster of members etcd processes (from the
// etcd binary on PATH; Debian's etcd-server package) and returns once it
// has a leader. Heartbeat and election timeout are etcd's defaults (100 ms,
// 1 s), so the smallest lease etcd grants is 2 s. Every process is killed
// when the test ends. A missing binary fails the test.
func StartEtcdCluster(t testing.TB, members int) *EtcdCluster {
	t.Helper()
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Fatalf("testenv: etcd not on PATH (install Debian's etcd-server: apt-get install etcd-server): %v", err)
	}
	if members < 1 {
		t.Fatalf("testenv: StartEtcdCluster: members = %d, want >= 1", members)
	}
	var err error
	for range 3 { // a port found free may be taken before etcd binds it
		c := &EtcdCluster{token: "baton-" + Unique()}
		for i := range members {
			c.Members = append(c.Members, &EtcdMember{
				Name: "m" + strconv.Itoa(i), ClientPort: FreePort(t), PeerPort: FreePort(t),
				dir: t.TempDir(), cluster: c,
			})
		}
		for _, m := range c.Members {
			if err = m.start(); err != nil {
				break
			}
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err = c.WaitLeader(ctx)
			cancel()
		}
		if err == nil {
			t.Cleanup(c.kill)
			return c
		}
		c.kill()
	}
	t.Fatalf("testenv: start etcd cluster: %v", err)
	return nil
}

// Endpoints are the client URLs of all members.
func (c *EtcdCluster) Endpoints() []string {
	eps := make([]string, len(c.Members))
	for i, m := range c.Members {
		eps[i] = m.URL()
	}
	return eps
}

func (c *EtcdCluster) kill() {
	for _, m := range c.Members {
		m.Kill()
	}
}

func (c *EtcdCluster) initialCluster() string {
	parts := make([]string, len(c.Members))
	for i, m := range c.Members {
		parts[i] = m.Name + "=" + m.peerURL()
	}
	return strings.Join(parts, ",")
}

// Leader returns the index in Members of the current leader, as reported by
// the first running member that answers, or an error when none knows one.
func (c *EtcdCluster) Leader(ctx context.Context) (int, error) {
	var lastErr error = errors.New("no running member")
	for _, m := range c.Members {
		if !m.Running() {
			continue
		}
		st, err := m.status(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		if st.Leader == "" || st.Leader == "0" {
			lastErr = fmt.Errorf("%s knows no leader", m.Name)
			continue
		}
		for i, o := range c.Members {
			if !o.Running() {
				continue
			}
			ost, err := o.status(ctx)
			if err == nil && ost.Header.MemberID == st.Leader {
				return i, nil
			}
		}
		lastErr = fmt.Errorf("leader %s is not a running member", st.Leader)
	}
	return -1, lastErr
}

// WaitLeader polls until a running member reports a leader that is running,
// and returns its index.
func (c *EtcdCluster) WaitLeader(ctx context.Context) (int, error) {
	for {
		i, err := c.Leader(ctx)
		if err == nil {
			return i, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("no etcd leader: %w (%v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// KillLeader kills the current leader and returns its index.
func (c *EtcdCluster) KillLeader(ctx context.Context) (int, error) {
	i, err := c.WaitLeader(ctx)
	if err != nil {
		return -1, err
	}
	c.Members[i].Kill()
	return i, nil
}

// URL is the member's client URL.
func (m *EtcdMember) URL() string { return "http://127.0.0.1:" + strconv.Itoa(m.ClientPort) }

func (m *EtcdMember) peerURL() string { return "http://127.0.0.1:" + strconv.Itoa(m.PeerPort) }

// Running reports whether the member's process is running (it may be
// paused).
func (m *EtcdMember) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

func (m *EtcdMember) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cmd := exec.Command("etcd",
		"--name", m.Name,
		"--data-dir", filepath.Join(m.dir, "data"),
		"--listen-client-urls", m.URL(), "--advertise-client-urls", m.URL(),
		"--listen-peer-urls", m.peerURL(), "--initial-advertise-peer-urls", m.peerURL(),
		"--initial-cluster", m.cluster.initialCluster(),
		"--initial-cluster-token", m.cluster.token,
		"--initial-cluster-state", "new", // ignored when the data directory exists
		"--logger", "zap", "--log-outputs", filepath.Join(m.dir, "etcd.log"),
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := waitTCP("127.0.0.1:"+strconv.Itoa(m.ClientPort), 10*time.Second); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return err
	}
	select {
	case <-exited:
		return fmt.Errorf("etcd %s exited at start (port taken?); log in %s", m.Name, m.dir)
	default:
	}
	m.cmd, m.exited = cmd, exited
	return nil
}

// Kill stops the member at once (SIGKILL). Its data directory stays, so
// Restart brings it back with its log.
func (m *EtcdMember) Kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGCONT)
	_ = m.cmd.Process.Kill()
	<-m.exited
	m.cmd = nil
}

// Restart kills the member if it runs and starts it again on the same ports
// and data directory. It returns once the process accepts connections; it
// may still be catching up with the leader.
func (m *EtcdMember) Restart() error {
	m.Kill()
	waitGone("127.0.0.1:" + strconv.Itoa(m.ClientPort))
	return m.start()
}

// Pause stops the member's process (SIGSTOP) without closing its
// connections; Resume continues it.
func (m *EtcdMember) Pause() { m.signal(syscall.SIGSTOP) }

// Resume continues a paused member.
func (m *EtcdMember) Resume() { m.signal(syscall.SIGCONT) }

func (m *EtcdMember) signal(sig syscall.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		_ = m.cmd.Process.Signal(sig)
	}
}

// etcdStatus is the part of the gateway's /v3/maintenance/status answer the
// harness reads; etcd encodes 64-bit integers as JSON strings.
type etcdStatus struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"`
}

func (m *EtcdMember) status(ctx context.Context) (etcdStatus, error) {
	var st etcdStatus
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL()+"/v3/maintenance/status", bytes.NewReader([]byte("{}")))
	if err != nil {
		return st, err
	}
	// No keep-alive: an idle connection's goroutines would outlive the test.
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s status: HTTP %d", m.Name, resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}
