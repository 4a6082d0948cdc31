package testenv

import (
	"fmt"
	"net"
	"time"
)

func freePortNoT() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitTCP(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections within %v: %w", addr, limit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits briefly until nothing accepts on addr, so a restart on the
// same port does not race the dying process.
func waitGone(addr string) {
	for i := 0; i < 200; i++ {
		c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond)
		if err != nil {
			return
		}
		_ = c.Close()
		time.Sleep(10 * time.Millisecond)
	}
}
