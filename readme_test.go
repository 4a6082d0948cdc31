package baton_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestReadmeSnippetsCompile builds every ```go block of README.md as a
// program of this module, so the quickstart cannot drift from the API.
func TestReadmeSnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllSubmatch(readme, -1)
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d Go blocks; want the three quickstarts", len(blocks))
	}
	var progs [][]byte
	for i, b := range blocks {
		if !bytes.HasPrefix(b[1], []byte("package ")) {
			t.Errorf("README Go block %d is not a complete program (starts %.30q)", i+1, b[1])
			continue
		}
		progs = append(progs, b[1])
	}
	vetPrograms(t, "README.md", progs)
}

// TestMigrationSnippetsCompile builds the complete programs (```go blocks
// starting with "package") of the migration guides, which map the peers'
// APIs to baton's; the shorter fragments there are not built.
func TestMigrationSnippetsCompile(t *testing.T) {
	for _, page := range []string{"docs/migrating-from-redislock.md", "docs/migrating-from-redsync.md"} {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		var progs [][]byte
		for _, b := range goBlock.FindAllSubmatch(text, -1) {
			if bytes.HasPrefix(b[1], []byte("package ")) {
				progs = append(progs, b[1])
			}
		}
		if len(progs) == 0 {
			t.Errorf("%s has no complete Go program", page)
		}
		vetPrograms(t, page, progs)
	}
}

// vetPrograms runs go vet on each program as a package of this module, in a
// directory starting with "_": the go tool builds it when named, and ./...
// never sees it.
func vetPrograms(t *testing.T, source string, progs [][]byte) {
	t.Helper()
	dir, err := os.MkdirTemp(".", "_snippets")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for i, prog := range progs {
		p := filepath.Join(dir, fmt.Sprintf("snippet%d", i+1))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "main.go"), prog, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(p))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: program %d does not compile: %v\n%s", source, i+1, err, strings.TrimSpace(string(out)))
		}
	}
}
