package sqlprov

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/isnil"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

// Default table names, the same in every SQL provider.
const (
	DefaultTable     = "baton_locks"
	DefaultRateTable = "baton_rates"
)

// Tables returns a config's lease and rate table names, each defaulted
// when empty.
func Tables(table, rates string) (string, string) {
	if table == "" {
		table = DefaultTable
	}
	if rates == "" {
		rates = DefaultRateTable
	}
	return table, rates
}

// New is what a SQL provider's New does before its own fields: db checked
// (neither nil nor a typed nil, which would panic at first use, far from
// the cause), the names resolved from cfg (nil for the defaults) and the
// migrations rendered with them. pkg names the provider in a
// *batontype.ValidationError.
func New[C, N, M any](pkg string, db any, cfg *C, resolve func(*C) (N, error), render func(N) (M, error)) (C, N, M, error) {
	var (
		c C
		n N
		m M
	)
	if db == nil {
		return c, n, m, &batontype.ValidationError{Pkg: pkg, Field: "db", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	if isnil.IsNil(db) {
		return c, n, m, &batontype.ValidationError{Pkg: pkg, Field: "db", Value: fmt.Sprintf("(%T)(nil)", db), Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	return prepare(cfg, resolve, render)
}

// Schema is a SQL provider's SchemaSQL(cfg): the DDL for cfg (nil for the
// defaults) without a connection, written by text from the resolved names
// and the rendered migrations. It fails only on invalid identifiers.
func Schema[C, N, M any](cfg *C, resolve func(*C) (N, error), render func(N) (M, error), text func(N, M) string) (string, error) {
	_, n, m, err := prepare(cfg, resolve, render)
	if err != nil {
		return "", err
	}
	return text(n, m), nil
}

func prepare[C, N, M any](cfg *C, resolve func(*C) (N, error), render func(N) (M, error)) (C, N, M, error) {
	c := defaults.Of(cfg)
	var m M
	n, err := resolve(&c)
	if err != nil {
		return c, n, m, err
	}
	m, err = render(n)
	return c, n, m, err
}

// File is one migration file: its name without the directory, and its
// text.
type File struct {
	Name, Text string
}

// Files returns the .sql files of dir in fsys (a provider's embedded
// migrations), in name order: their NNN_ prefixes order them.
func Files(fsys fs.FS, dir string) ([]File, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	files := make([]File, 0, len(names))
	for _, f := range names {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: strings.TrimPrefix(f, dir+"/"), Text: string(b)})
	}
	return files, nil
}

// Render executes text, a template of a SQL file named name, on data with
// funcs (may be nil). A field data lacks is an error; errors are prefixed
// with pkg.
func Render(pkg, name, text string, funcs template.FuncMap, data any) (string, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("%s: parse %s: %w", pkg, name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s: render %s: %w", pkg, name, err)
	}
	return b.String(), nil
}

// Inspected is Inspect's answer from the leases a query for name read:
// the first, or an absent lease when there is none. A failed query (err)
// is wrapped as an "inspect" of name.
func Inspected(name string, infos []batontype.LeaseInfo, err error, wrap func(op, name string, err error) error) (batontype.LeaseInfo, error) {
	if err != nil {
		return batontype.LeaseInfo{}, wrap("inspect", name, err)
	}
	if len(infos) == 0 {
		return batontype.LeaseInfo{Name: name}, nil
	}
	return infos[0], nil
}

// Conn is what Ops needs of a provider's handle, in the provider's driver.
type Conn interface {
	// QueryRow runs a statement and scans its first row into dest. A
	// statement that answers no row returns an error matching the
	// driver's no-row error (Ops.NoRows).
	QueryRow(ctx context.Context, query string, args []any, dest ...any) error
	// Query runs a statement and, for each row it answers, scans the row
	// into dest and calls row.
	Query(ctx context.Context, query string, args []any, dest []any, row func() error) error
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// Ops runs a SQL provider's one-statement operations over Conn.
type Ops struct {
	Conn Conn
	// NoRows is the driver's error for a statement that answered no row
	// (sql.ErrNoRows, pgx.ErrNoRows).
	NoRows error
	// Wrap wraps a failed statement's error once (the provider's
	// backenderr wrapper).
	Wrap func(op, name string, err error) error
	// Duration is a duration as the provider's statements take it.
	Duration func(time.Duration) any
}

// Exec runs one statement after check.Args(ctx, invalid); its failure is
// wrapped as op on name.
func (o Ops) Exec(ctx context.Context, invalid error, op, name, query string, args ...any) error {
	return o.Changed(ctx, invalid, op, name, nil, query, args...)
}

// Changed is Exec, and a statement that changed no row returns none
// (unless none is nil).
func (o Ops) Changed(ctx context.Context, invalid error, op, name string, none error, query string, args ...any) error {
	if err := check.Args(ctx, invalid); err != nil {
		return err
	}
	n, err := o.Conn.Exec(ctx, query, args...)
	switch {
	case err != nil:
		return o.Wrap(op, name, err)
	case n == 0 && none != nil:
		return none
	}
	return nil
}

// Row runs one statement after check.Args(ctx, invalid) and scans its row
// into dest. No row returns missing (when missing is nil, no row is a
// failure like any other); a failure is wrapped as op on name.
func (o Ops) Row(ctx context.Context, invalid error, op, name string, missing error, query string, args []any, dest ...any) error {
	if err := check.Args(ctx, invalid); err != nil {
		return err
	}
	err := o.Conn.QueryRow(ctx, query, args, dest...)
	switch {
	case missing != nil && errors.Is(err, o.NoRows):
		return missing
	case err != nil:
		return o.Wrap(op, name, err)
	}
	return nil
}

// Ping implements lockprovider.Admin: one round trip.
func (o Ops) Ping(ctx context.Context) error {
	var one int
	return o.Row(ctx, nil, "ping", "", nil, "SELECT 1", nil, &one)
}

// ListRates implements lockprovider.RateLister with query, which answers
// key, limit id and expiry (µs since the Unix epoch) of the live rate
// rows. A row of a limit id this version does not know is left out.
func (o Ops) ListRates(ctx context.Context, query string) ([]batontype.RateInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	var (
		out      []batontype.RateInfo
		key, lim string
		exp      int64
	)
	err := o.Conn.Query(ctx, query, nil, []any{&key, &lim, &exp}, func() error {
		if a, per, ok := ratewire.ParseID(lim); ok {
			out = append(out, batontype.RateInfo{Key: key, Algorithm: a, Period: per, ResetAt: time.UnixMicro(exp)})
		}
		return nil
	})
	if err != nil {
		return nil, o.Wrap("list rates", "", err)
	}
	return out, nil
}

// Register implements lockprovider.Registry with query, which takes the
// instance's LockedBy, its JSON and the ttl.
func (o Ops) Register(ctx context.Context, query string, inst batontype.Instance, ttl time.Duration) error {
	b, err := check.Register(ctx, inst, ttl)
	if err != nil {
		return err
	}
	return o.Exec(ctx, nil, "register", inst.LockedBy, query, inst.LockedBy, string(b), o.Duration(ttl))
}

// Entry returns the registry entry of a row that the registry queries
// read: its LockedBy, the instance's JSON, its heartbeat and until, and
// for a departed one whether it left.
func Entry(lockedBy, info string, heartbeat, until time.Time, left bool) (batontype.Departed, error) {
	d := batontype.Departed{Left: left}
	if err := json.Unmarshal([]byte(info), &d.Instance); err != nil {
		return d, fmt.Errorf("entry %q: %w", lockedBy, err)
	}
	d.LockedBy, d.Heartbeat, d.Until = lockedBy, heartbeat, until
	return d, nil
}

// Live returns the instances of registry entries read as departed ones
// (one scan for both kinds of rows).
func Live(ds []batontype.Departed) []batontype.Instance {
	out := make([]batontype.Instance, len(ds))
	for i, d := range ds {
		out[i] = d.Instance
	}
	return out
}
