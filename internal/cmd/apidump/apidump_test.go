package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture copies testdata/fixture to a temporary directory and adds the
// go.mod files, which cannot live in testdata: the Makefile would take them
// for modules of the repository.
func fixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/fixture")); err != nil {
		t.Fatal(err)
	}
	for dir, mod := range map[string]string{".": "example.com/fixture", "plugin": "example.com/fixture/plugin"} {
		data := "module " + mod + " // a comment\n\ngo 1.26\n"
		if err := os.WriteFile(filepath.Join(root, dir, "go.mod"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDump(t *testing.T) {
	files, err := dumpTree(fixture(t), []string{"skipped"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"fixture.txt": {
			"const Alias Kind = 2",
			"const Double = 32",
			"const KindA Kind = 1",
			"const KindB Kind = 2",
			"const KindD Kind = 4",
			"const Max = 16",
			`const Name = "fixture"`,
			"const Shown uint64 = 28",
			"const Timeout = 30 * time.Second",
			"func New(context.Context, *Config, ...string) (*Set[string, int], error)",
			"func Sum[T Number, U any]([]T, U) T",
			"method (*Set[K, V]) Add(K, V)",
			"method (Kind) String() string",
			"method (Set[K, V]) Len() int",
			"type Config struct",
			"type Config struct, A int",
			"type Config struct, B int",
			"type Config struct, Callback func(...string)",
			"type Config struct, Chan <-chan struct{}",
			"type Config struct, Nested struct{X int; y int}",
			"type Config struct, OnDone func(context.Context, error) bool",
			"type Config struct, Timeout time.Duration",
			"type Config struct, embedded io.Closer",
			"type Duration = time.Duration",
			"type Handler func(context.Context, *Config) error",
			"type Kind int",
			"type Number interface",
			"type Number interface, ~int | ~int64 | float64",
			"type Set[K comparable, V any] struct",
			"type Set[K comparable, V any] struct, Items map[K]V",
			"type Store interface",
			"type Store interface, Get(context.Context, string) ([]byte, error)",
			"type Store interface, Put(context.Context, string, []byte) error",
			"type Store interface, embedded io.Closer",
			"type Store interface, unexported methods",
			"var Default Config",
			"var DefaultPtr *Config",
			"var ErrClosed error",
			"var ErrWrapped error",
			"var Reader io.Reader",
			"var Same = ErrClosed",
		},
		"sub.txt":    {"func Hello() string"},
		"plugin.txt": {"const Limit = 16"},
	}
	prefix := map[string]string{
		"fixture.txt": "pkg example.com/fixture, ",
		"sub.txt":     "pkg example.com/fixture/sub, ",
		"plugin.txt":  "pkg example.com/fixture/plugin, ",
	}
	for name, lines := range want {
		for i := range lines {
			lines[i] = prefix[name] + lines[i]
		}
		if got := files[name]; !slices.Equal(got, lines) {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(lines, "\n"))
		}
	}
	for name := range files {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected file %s: %q", name, files[name])
		}
	}
}

func TestRunRemovesStaleFiles(t *testing.T) {
	root, out := fixture(t), t.TempDir()
	for _, name := range []string{"gone.txt", "README.md"} {
		if err := os.WriteFile(filepath.Join(out, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(root, out, nil); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"README.md", "fixture.txt", "plugin.txt", "skipped.txt", "sub.txt"}
	if !slices.Equal(names, want) {
		t.Errorf("files in out = %q, want %q", names, want)
	}
	data, err := os.ReadFile(filepath.Join(out, "sub.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "pkg example.com/fixture/sub, func Hello() string\n"; got != want {
		t.Errorf("sub.txt = %q, want %q", got, want)
	}
}
