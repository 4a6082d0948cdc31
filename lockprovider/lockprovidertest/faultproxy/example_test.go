package faultproxy_test

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/baton-go/baton/lockprovider/lockprovidertest/faultproxy"
)

// A proxy in front of an echo server: requests pass, then go unanswered
// while it blackholes, then are answered once it passes again.
func Example() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.Copy(c, c)
			_ = c.Close()
		}
	}()
	// In a test, faultproxy.New(t, addr) closes it when the test ends.
	p, err := faultproxy.Start(ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	c, _ := net.Dial("tcp", p.Addr())
	defer c.Close()
	buf := make([]byte, 4)
	ask := func() string {
		_, _ = c.Write([]byte("ping"))
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := io.ReadFull(c, buf); err != nil {
			return "no answer"
		}
		return string(buf)
	}
	fmt.Println(ask())
	p.SetMode(faultproxy.Blackhole)
	fmt.Println(ask())
	p.SetMode(faultproxy.Pass)
	time.Sleep(100 * time.Millisecond)
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := io.ReadFull(c, buf); err == nil {
		fmt.Println(string(buf), "held, then answered once the network healed")
	}
	// Output:
	// ping
	// no answer
	// ping held, then answered once the network healed
}
