// Command apidump records the exported API of every public package of the
// repository in api/, one file per package, so that a change to the API
// shows in review as a change to those files. `make api` runs it; `make
// lint` runs it into a temporary directory and fails when the result
// differs from api/.
//
// Usage:
//
//	go run ./internal/cmd/apidump [-root .] [-out api] [-skip bench,examples,cmd,status/browsertest]
//
// It walks every module under root (each directory with a go.mod), skipping
// internal and testdata directories, directories starting with "." or "_",
// the directories named by -skip (relative to root), package main, and
// packages without exported declarations. The package at root/a/b is written
// to out/a_b.txt; the root package to out/<last element of its module
// path>.txt. Stale .txt files in out are removed.
//
// Each line is one feature, in the form of Go's own api files, and a file's
// lines are sorted:
//
//	pkg example.com/m/p, func New(*Config) (*T, error)
//	pkg example.com/m/p, method (*T) Close() error
//	pkg example.com/m/p, type Config struct
//	pkg example.com/m/p, type Config struct, Timeout time.Duration
//	pkg example.com/m/p, type Store interface, Get(context.Context, string) ([]byte, error)
//	pkg example.com/m/p, const Mode Kind = 2
//	pkg example.com/m/p, var ErrClosed error
//
// The files are parsed, not type-checked, so the tool is fast, needs no
// dependency and works offline. Types are therefore printed as written in
// the source (with parameter names dropped), a constant's value is
// evaluated only when it depends on iota or on the package's own
// constants (otherwise its expression is printed), and a variable without a
// declared type is shown as error when initialised with errors.New or
// fmt.Errorf, else by its initial expression. Methods promoted through an
// embedded field are not listed: the field is, as "embedded T".
//
// Build constraints are evaluated for linux/amd64, so the output does not
// depend on the machine that runs the tool.
package main
