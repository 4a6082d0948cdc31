package faultproxy

import (
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Mode is what a Proxy does with the traffic it carries.
type Mode int

// The modes of a Proxy. Delay (SetDelay) combines with any of them.
const (
	// Pass forwards every chunk both ways.
	Pass Mode = iota
	// Blackhole accepts connections and reads what clients send, but
	// forwards nothing either way: requests get no answer, as behind a
	// network partition. Data read meanwhile is held, not lost, and flows
	// when the mode changes back (as TCP retransmission would deliver it
	// once a partition heals); Reset drops it with the connections.
	// Connections opened meanwhile complete the TCP handshake (the kernel
	// answers it), then hear nothing.
	Blackhole
	// DropReplies forwards requests to the server and discards what the
	// server sends back: requests take effect, their replies never arrive.
	DropReplies
	// Reset closes every open connection with a TCP reset when set, and
	// resets each new connection as soon as it is accepted.
	Reset
)

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Blackhole:
		return "blackhole"
	case DropReplies:
		return "drop-replies"
	case Reset:
		return "reset"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Proxy is a TCP proxy on a loopback port in front of one server, for fault
// tests: clients connect to Addr instead of the server, and the test
// switches the Mode and the delay while they run. It is closed, with every
// connection and goroutine it started, by Close (when the test ends for
// one made by New).
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	mode    Mode
	delay   time.Duration
	changed chan struct{} // closed and replaced on every SetMode/SetDelay
	conns   map[*proxyConn]struct{}
	closed  bool

	accepted atomic.Int64
	wg       sync.WaitGroup
}

// New starts a proxy to target (host:port) on a free loopback port, in
// mode Pass without delay, closed when the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := Start(target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Start is New for a caller without a test (a helper process, an
// example): the caller closes the proxy.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, changed: make(chan struct{}),
		conns: make(map[*proxyConn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// URL starts a proxy in front of the server of rawURL (a redis:// or
// postgres:// URL) and returns it with the URL rewritten to go through it.
func URL(t testing.TB, rawURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		t.Fatalf("faultproxy: not a URL with a host: %q", rawURL)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"redis": "6379", "postgres": "5432", "postgresql": "5432"}[u.Scheme]
	}
	p := New(t, net.JoinHostPort(host, port))
	u.Host = p.Addr()
	return p, u.String()
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Accepted is the number of connections accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Mode returns the current mode.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetMode switches the mode for open and new connections.
func (p *Proxy) SetMode(m Mode) {
	p.mu.Lock()
	p.mode = m
	p.notifyLocked()
	var reset []*proxyConn
	if m == Reset {
		for c := range p.conns {
			reset = append(reset, c)
		}
	}
	p.mu.Unlock()
	for _, c := range reset {
		c.reset()
	}
}

// SetDelay delays each chunk read from either side by d before it is
// forwarded, in order; 0 forwards at once. A chunk is what one read
// returned, typically one request or one reply. The delay of a chunk is the
// one set when it was read.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.notifyLocked()
	p.mu.Unlock()
}

// ResetAll closes every open connection with a TCP reset, leaving the mode
// as it is: new connections are served as before.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	var all []*proxyConn
	for c := range p.conns {
		all = append(all, c)
	}
	p.mu.Unlock()
	for _, c := range all {
		c.reset()
	}
}

// Close stops accepting, resets every connection and waits for the
// proxy's goroutines. It is called when the test ends; calling it earlier
// makes the proxy's port refuse connections.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.ResetAll()
	p.wg.Wait()
}

func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// state returns the mode, the delay and the channel closed at the next
// change.
func (p *Proxy) state() (Mode, time.Duration, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode, p.delay, p.changed
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.accepted.Add(1)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// proxyConn is one client connection and its connection to the target.
type proxyConn struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{} // closed when the pair is closed
}

func (c *proxyConn) close(rst bool) {
	c.once.Do(func() {
		if rst {
			if tc, ok := c.client.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close sends RST, not FIN
			}
		}
		_ = c.client.Close()
		_ = c.server.Close()
		close(c.done)
	})
}

func (c *proxyConn) reset() { c.close(true) }

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		// The target is down: the client sees its connection reset, as
		// near as a proxy gets to a refused dial.
		_ = client.(*net.TCPConn).SetLinger(0)
		_ = client.Close()
		return
	}
	c := &proxyConn{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed || p.mode == Reset {
		p.mu.Unlock()
		c.reset()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	var pumps sync.WaitGroup
	pumps.Add(2)
	go func() { defer pumps.Done(); p.pump(c, client, server, false) }()
	go func() { defer pumps.Done(); p.pump(c, server, client, true) }()
	pumps.Wait()
}

type chunk struct {
	b  []byte
	at time.Time // when to forward it at the earliest
}

// pump copies src to dst chunk by chunk, applying the mode and the delay.
// reply is true for the direction server to client. A reader goroutine
// keeps reading while the writer holds chunks back, up to a bounded queue,
// so a delay adds latency without cutting throughput.
func (p *Proxy) pump(c *proxyConn, src, dst net.Conn, reply bool) {
	q := make(chan chunk, 64)
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				_, d, _ := p.state()
				select {
				case q <- chunk{b: buf[:n], at: time.Now().Add(d)}:
				case <-c.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		c.close(false) // either side ended: end both, as a plain proxy would
		reader.Wait()
	}()
	for ch := range q {
		if !p.hold(c, ch.at) {
			return
		}
		mode, _, _ := p.state()
		if mode == DropReplies && reply {
			continue
		}
		if _, err := dst.Write(ch.b); err != nil {
			return
		}
	}
}

// hold waits until a chunk may be forwarded: its delay has passed and the
// mode is not Blackhole. It returns false when the connection closed.
func (p *Proxy) hold(c *proxyConn, at time.Time) bool {
	for {
		mode, _, changed := p.state()
		if mode == Reset {
			return false
		}
		var timer *time.Timer
		var wait <-chan time.Time
		if mode != Blackhole {
			d := time.Until(at)
			if d <= 0 {
				return true
			}
			timer = time.NewTimer(d)
			wait = timer.C
		}
		select {
		case <-c.done:
			return false
		case <-changed:
			if timer != nil {
				timer.Stop()
			}
		case <-wait:
			return true
		}
	}
}
