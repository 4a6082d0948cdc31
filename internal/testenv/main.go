package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

// atExit registers process-level teardown run by Main after the tests.
func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

// Main runs the tests of a package, tears down shared servers, and fails the
// run if goroutines leaked. Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	cleanupMu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanupMu.Unlock()
	if code == 0 {
		opts = append(opts,
			// pgxpool's background health checker and go-redis pools close
			// asynchronously; tests close their clients, so give them time.
			goleak.IgnoreCurrent(),
		)
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Unique returns a short random identifier for keys, schemas and names.
func Unique() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Prefix returns a Redis key prefix unique to this test.
func Prefix(t testing.TB) string {
	return "t" + Unique() + ":"
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
