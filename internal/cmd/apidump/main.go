package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	root := flag.String("root", ".", "repository root")
	out := flag.String("out", "api", "directory the API files are written to")
	skip := flag.String("skip", "bench,examples,cmd,status/browsertest", "comma-separated directories, relative to root, left out")
	flag.Parse()
	if err := run(*root, *out, strings.Split(*skip, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "apidump:", err)
		os.Exit(1)
	}
}

// run writes the API file of every public package under root to out and
// removes the .txt files of out that belong to no package any more.
func run(root, out string, skip []string) error {
	files, err := dumpTree(root, skip)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, lines := range files {
		data := []byte(strings.Join(lines, "\n") + "\n")
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok && !e.IsDir() && strings.HasSuffix(e.Name(), ".txt") {
			if err := os.Remove(filepath.Join(out, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// tree is the repository: its modules and the packages parsed so far.
type tree struct {
	root    string
	ctx     build.Context
	modules map[string]string  // module path → its directory, slash-separated, relative to root
	pkgs    map[string]*dumper // import path → package
}

func newTree(root string) *tree {
	// Fixed, so that the output is the same on every machine.
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", true
	ctx.BuildTags = nil
	return &tree{root: root, ctx: ctx, modules: map[string]string{}, pkgs: map[string]*dumper{}}
}

// dumpTree returns the API lines of every public package under root, keyed
// by the name of its file.
func dumpTree(root string, skip []string) (map[string][]string, error) {
	t := newTree(root)
	type public struct{ importPath, file string }
	var found []public
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." {
			name := d.Name()
			if name == "internal" || name == "testdata" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
		}
		if mod, err := modulePath(filepath.Join(p, "go.mod")); err == nil {
			t.modules[mod] = rel
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		importPath, err := t.importPath(rel)
		if err != nil {
			return err
		}
		pkg, err := t.load(importPath, rel)
		if err != nil || pkg == nil || pkg.name == "main" {
			return err
		}
		file := strings.ReplaceAll(rel, "/", "_") + ".txt"
		if rel == "." {
			file = path.Base(importPath) + ".txt"
		}
		found = append(found, public{importPath, file})
		return nil
	})
	if err != nil {
		return nil, err
	}
	files := map[string][]string{}
	owner := map[string]string{} // file → import path, to catch two packages sharing a file
	for _, p := range found {
		lines := t.pkgs[p.importPath].apiLines()
		if len(lines) == 0 {
			continue
		}
		if prev, ok := owner[p.file]; ok {
			return nil, fmt.Errorf("%s and %s would both be written to %s", prev, p.importPath, p.file)
		}
		owner[p.file] = p.importPath
		files[p.file] = lines
	}
	return files, nil
}

// importPath returns the import path of the package in dir rel: the path
// of the innermost module holding it, joined with rel below that module.
func (t *tree) importPath(rel string) (string, error) {
	best, bestDir, bestLen := "", "", -1
	for mod, dir := range t.modules {
		n := 0
		if dir != "." {
			if rel != dir && !strings.HasPrefix(rel, dir+"/") {
				continue
			}
			n = len(dir)
		}
		if n > bestLen {
			best, bestDir, bestLen = mod, dir, n
		}
	}
	switch {
	case best == "":
		return "", fmt.Errorf("%s: no go.mod at or above it", rel)
	case bestDir == rel:
		return best, nil
	case bestDir == ".":
		return best + "/" + rel, nil
	}
	return best + "/" + strings.TrimPrefix(rel, bestDir+"/"), nil
}

// dir returns the directory, relative to root, of a package of one of the
// repository's modules, and false for any other import path.
func (t *tree) dir(importPath string) (string, bool) {
	best := ""
	for mod := range t.modules {
		if (importPath == mod || strings.HasPrefix(importPath, mod+"/")) && len(mod) > len(best) {
			best = mod
		}
	}
	if best == "" {
		return "", false
	}
	return path.Join(t.modules[best], strings.TrimPrefix(strings.TrimPrefix(importPath, best), "/")), true
}

// load parses the package in dir rel, once; it returns nil when the
// directory holds no Go package.
func (t *tree) load(importPath, rel string) (*dumper, error) {
	if d, ok := t.pkgs[importPath]; ok {
		return d, nil
	}
	dir := filepath.Join(t.root, filepath.FromSlash(rel))
	bp, err := t.ctx.ImportDir(dir, 0)
	if err != nil {
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			t.pkgs[importPath] = nil
			return nil, nil
		}
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range bp.GoFiles {
		af, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, af)
	}
	d := newDumper(importPath, bp.Name, files, t)
	t.pkgs[importPath] = d
	return d, nil
}

// constValue returns the value of the constant name of a package of the
// repository, or nil when it is not one or cannot be evaluated.
func (t *tree) constValue(importPath, name string) constant.Value {
	rel, ok := t.dir(importPath)
	if !ok {
		return nil
	}
	d, err := t.load(importPath, rel)
	if err != nil || d == nil {
		return nil
	}
	c, ok := d.consts[name]
	if !ok {
		return nil
	}
	v, _ := d.eval(c)
	return v
}

// modulePath reads the module path from a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		mod := strings.TrimSpace(rest)
		if uq, err := strconv.Unquote(mod); err == nil {
			mod = uq
		}
		return mod, nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
