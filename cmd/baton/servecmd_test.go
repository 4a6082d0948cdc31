package main_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// startServe starts `baton serve args...` with env added to the
// environment, reads the first n lines it prints (trimmed; fewer, with
// the read error, if its output ends first), and stops it with SIGINT when
// the test ends, which must exit 0.
func startServe(t *testing.T, env []string, n int, args ...string) ([]string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("baton serve after SIGINT: %v, want exit 0", err)
		}
	})
	out := bufio.NewReader(stdout)
	var lines []string
	for range n {
		line, err := out.ReadString('\n')
		if err != nil {
			return lines, err
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	return lines, nil
}
