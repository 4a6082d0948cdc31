package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ChildReport is the prefix of the lines a worker process prints for its
// parent; anything else on its stdout is the testing package's own output.
const ChildReport = "@@ "

// Child is the test binary re-executed to run one test function as a worker
// process that the test can stop, resume and kill, as a replica would be.
type Child struct {
	Cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr lockedBuffer
	done   chan struct{}
	mu     sync.Mutex // serialises Send
}

// StartChild runs the test named test (a worker body that begins with
// ChildSpec(t, envKey, ...)) in a new process of the test binary, with spec
// in JSON as envKey in its environment. Each line the worker prints starting with ChildReport
// is passed to onLine without the prefix, in order, from one goroutine.
// When the test ends the child is resumed (a stopped process never exits),
// its stdin is closed, and it is killed if it has not exited 20 s later; its
// stderr is logged if the test failed.
func StartChild(t testing.TB, test, envKey string, spec any, onLine func(line string)) *Child {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), envKey+"="+string(raw))
	c := &Child{Cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), ChildReport); ok {
				onLine(line)
			}
		}
	}()
	t.Cleanup(func() {
		c.Signal(syscall.SIGCONT)
		_ = c.stdin.Close()
		timer := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
		<-c.done
		_ = cmd.Wait()
		timer.Stop()
		if t.Failed() {
			t.Logf("worker %s stderr:\n%s", test, c.Stderr())
		}
	})
	return c
}

// ChildSpec starts the body of a worker process: run directly (envKey
// unset) it skips the test; in a child it decodes the spec StartChild gave
// into spec and returns the function that reports a line to the parent. A
// worker that fails reports "failed".
func ChildSpec(t *testing.T, envKey string, spec any) (report func(format string, args ...any)) {
	t.Helper()
	raw := os.Getenv(envKey)
	if raw == "" {
		t.Skip("worker process body; runs only when a test starts it with StartChild")
	}
	if err := json.Unmarshal([]byte(raw), spec); err != nil {
		t.Fatal(err)
	}
	report = func(format string, args ...any) { fmt.Printf(ChildReport+format+"\n", args...) }
	t.Cleanup(func() {
		if t.Failed() {
			report("failed")
		}
	})
	return report
}

// Signal sends sig to the child, ignoring a child that has exited.
func (c *Child) Signal(sig syscall.Signal) {
	if c.Cmd.Process != nil {
		_ = c.Cmd.Process.Signal(sig)
	}
}

// Send writes line and a newline to the child's stdin.
func (c *Child) Send(line string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := io.WriteString(c.stdin, line+"\n")
	return err
}

// CloseStdin closes the child's stdin, which tells a worker reading it to
// stop.
func (c *Child) CloseStdin() { _ = c.stdin.Close() }

// Done is closed when the child's stdout ends (it exited), after the last
// onLine call.
func (c *Child) Done() <-chan struct{} { return c.done }

// Stderr returns what the child has written to its stderr so far.
func (c *Child) Stderr() string { return c.stderr.String() }

// lockedBuffer is a bytes.Buffer that the child's stderr copier and the
// test may use at the same time.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
