package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// echoServer echoes every chunk back and reports what it received, so a
// test can tell "the request arrived" from "the reply arrived".
type echoServer struct {
	ln   net.Listener
	got  chan string
	wg   sync.WaitGroup
	mu   sync.Mutex
	open []net.Conn
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln, got: make(chan string, 100)}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.open = append(e.open, c)
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				buf := make([]byte, 1024)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						e.got <- string(buf[:n])
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		e.mu.Lock()
		for _, c := range e.open {
			_ = c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

// received waits up to limit for the next chunk the server received.
func (e *echoServer) received(limit time.Duration) (string, bool) {
	select {
	case s := <-e.got:
		return s, true
	case <-time.After(limit):
		return "", false
	}
}

func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads len(msg) bytes back within limit.
func roundTrip(c net.Conn, msg string, limit time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	return readN(c, len(msg), limit)
}

func readN(c net.Conn, n int, limit time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(limit))
	buf := make([]byte, n)
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestProxyPassAndDelay(t *testing.T) {
	t.Parallel()
	e := startEcho(t)
	p := New(t, e.ln.Addr().String())
	c := dialProxy(t, p)
	if got, err := roundTrip(c, "hello", time.Second); err != nil || got != "hello" {
		t.Fatalf("pass: %q, %v", got, err)
	}
	const d = 150 * time.Millisecond
	p.SetDelay(d)
	start := time.Now()
	if got, err := roundTrip(c, "slow", 3*time.Second); err != nil || got != "slow" {
		t.Fatalf("delayed: %q, %v", got, err)
	}
	// Each direction delays the chunk once: a round trip takes two delays.
	if took := time.Since(start); took < 2*d || took > 2*d+time.Second {
		t.Errorf("round trip with %v per chunk took %v; want about %v", d, took, 2*d)
	}
	// A delay adds latency, not a queue: chunks sent together arrive
	// about one delay later, not one delay each.
	start = time.Now()
	for _, m := range []string{"a", "b", "c", "d"} {
		if _, err := c.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, err := readN(c, 4, 3*time.Second); err != nil || got != "abcd" {
		t.Fatalf("pipelined: %q, %v", got, err)
	}
	if took := time.Since(start); took > 2*d+500*time.Millisecond {
		t.Errorf("4 pipelined chunks took %v; want about %v", took, 2*d)
	}
	p.SetDelay(0)
	start = time.Now()
	if _, err := roundTrip(c, "fast", time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > d {
		t.Errorf("round trip after SetDelay(0) took %v", took)
	}
}

func TestProxyBlackhole(t *testing.T) {
	t.Parallel()
	e := startEcho(t)
	p := New(t, e.ln.Addr().String())
	c := dialProxy(t, p)
	if _, err := roundTrip(c, "up", time.Second); err != nil {
		t.Fatal(err)
	}
	<-e.got

	p.SetMode(Blackhole)
	if _, err := roundTrip(c, "lost?", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("blackhole: read returned %v; want a timeout", err)
	}
	if s, ok := e.received(100 * time.Millisecond); ok {
		t.Fatalf("blackhole forwarded %q to the server", s)
	}
	// A new connection is accepted but hears nothing either.
	c2 := dialProxy(t, p)
	if _, err := roundTrip(c2, "new", 200*time.Millisecond); !isTimeout(err) {
		t.Fatalf("blackhole, new connection: %v; want a timeout", err)
	}

	// Healing delivers what was held, in order, on both connections.
	p.SetMode(Pass)
	if got, err := readN(c, 5, time.Second); err != nil || got != "lost?" {
		t.Fatalf("after the blackhole: %q, %v", got, err)
	}
	if got, err := readN(c2, 3, time.Second); err != nil || got != "new" {
		t.Fatalf("after the blackhole, new connection: %q, %v", got, err)
	}
}

func TestProxyDropReplies(t *testing.T) {
	t.Parallel()
	e := startEcho(t)
	p := New(t, e.ln.Addr().String())
	c := dialProxy(t, p)
	p.SetMode(DropReplies)
	if _, err := roundTrip(c, "req", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("drop replies: read returned %v; want a timeout", err)
	}
	if s, ok := e.received(time.Second); !ok || s != "req" {
		t.Fatalf("the request did not reach the server: %q", s)
	}
	// The dropped reply is gone for good; the next one arrives.
	p.SetMode(Pass)
	if got, err := roundTrip(c, "next", time.Second); err != nil || got != "next" {
		t.Fatalf("after drop replies: %q, %v", got, err)
	}
}

func TestProxyReset(t *testing.T) {
	t.Parallel()
	e := startEcho(t)
	p := New(t, e.ln.Addr().String())
	c := dialProxy(t, p)
	if _, err := roundTrip(c, "up", time.Second); err != nil {
		t.Fatal(err)
	}
	p.SetMode(Reset)
	if _, err := readN(c, 1, time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("open connection after Reset: %v; want ECONNRESET", err)
	}
	// A new connection is reset at once: the dial itself may see the reset
	// (on loopback it can arrive before connect returns), or the first read.
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		_, err = roundTrip(c2, "x", time.Second)
		c2.Close()
		if err == nil || isTimeout(err) {
			t.Fatalf("new connection in Reset mode: %v; want it reset", err)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("dial in Reset mode: %v; want a reset", err)
	}
	p.SetMode(Pass)
	c3 := dialProxy(t, p)
	if got, err := roundTrip(c3, "back", time.Second); err != nil || got != "back" {
		t.Fatalf("after Reset mode: %q, %v", got, err)
	}
	p.ResetAll()
	if _, err := readN(c3, 1, time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after ResetAll: %v; want ECONNRESET", err)
	}
	if n := p.Accepted(); n != 3 {
		t.Errorf("Accepted %d; want 3", n)
	}
	p.Close()
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Fatal("dial after Close succeeded")
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
