package baton_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReadmeSnippetsCompile builds every ```go block of README.md as a
// program of this module, so the quickstart cannot drift from the API.
func TestReadmeSnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d Go blocks; want the three quickstarts", len(blocks))
	}
	// A directory starting with "_" inside the module: the go tool builds
	// it when named, and ./... never sees it.
	dir, err := os.MkdirTemp(".", "_readme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var pkgs []string
	for i, b := range blocks {
		if !bytes.HasPrefix(b[1], []byte("package ")) {
			t.Errorf("README Go block %d is not a complete program (starts %.30q)", i+1, b[1])
			continue
		}
		p := filepath.Join(dir, fmt.Sprintf("snippet%d", i+1))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "main.go"), b[1], 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(p))
	}
	for _, p := range pkgs {
		cmd := exec.Command("go", "vet", p)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README snippet %s does not compile: %v\n%s", p, err, out)
		}
	}
}
