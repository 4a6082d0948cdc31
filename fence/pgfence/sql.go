package pgfence

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-go/baton/fence"
)

// DefaultColumn is the fence column's name unless GuardConfig says otherwise.
const DefaultColumn = "last_fence"

// DB is the part of pgx a Guard needs. *pgxpool.Pool, *pgx.Conn and pgx.Tx
// satisfy it, so a guarded write can run alone or inside the caller's
// transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// GuardConfig configures a Guard. The zero value (or nil) means the
// defaults.
type GuardConfig struct {
	// Column is the bigint column holding the largest token that wrote the
	// row. Empty means DefaultColumn.
	Column string
}

// Guard applies writes to the rows of one table only for fencing tokens not
// smaller than the token stored in the row's fence column, and stores the
// token with the write, in one statement. It is immutable and safe for
// concurrent use.
type Guard struct {
	table  string // quoted, possibly schema-qualified
	key    string // quoted
	column string // quoted
	colRaw string
	keyRaw string
}

// NewGuard returns a Guard for table (optionally schema-qualified, as
// "schema.table"), whose rows are identified by keyColumn, which must be
// unique (a primary key). Identifiers must be plain SQL identifiers (letters,
// digits, underscores, not starting with a digit, at most 63 bytes); they
// are quoted, so they are matched exactly as written: a table created
// without quotes has a lower-case name.
func NewGuard(table, keyColumn string, cfg *GuardConfig) (*Guard, error) {
	t, err := quoteTable(table)
	if err != nil {
		return nil, err
	}
	if err := checkIdent("keyColumn", keyColumn); err != nil {
		return nil, err
	}
	col := DefaultColumn
	if cfg != nil && cfg.Column != "" {
		col = cfg.Column
	}
	if err := checkIdent("GuardConfig.Column", col); err != nil {
		return nil, err
	}
	if col == keyColumn {
		return nil, invalid("GuardConfig.Column", col, "must differ from the key column", ErrInvalidIdentifier)
	}
	return &Guard{table: t, key: quote(keyColumn), column: quote(col), colRaw: col, keyRaw: keyColumn}, nil
}

// AddColumn adds the fence column (bigint, nullable: a row never written
// through a guard has NULL, read as 0) to the guard's table if it is not
// there yet.
func (g *Guard) AddColumn(ctx context.Context, db DB) error {
	if err := checkCall(ctx, g != nil && g.table != ""); err != nil {
		return err
	}
	if db == nil {
		return invalid("db", "<nil>", "must not be nil", fence.ErrInvalid)
	}
	_, err := db.Exec(ctx, "ALTER TABLE "+g.table+" ADD COLUMN IF NOT EXISTS "+g.column+" bigint")
	if err != nil {
		return fmt.Errorf("pgfence: add column: %w", err)
	}
	return nil
}

// AddColumn adds a DefaultColumn fence column to table if it is not there
// yet. See Guard.AddColumn.
func AddColumn(ctx context.Context, db DB, table string) error {
	t, err := quoteTable(table)
	if err != nil {
		return err
	}
	if err := checkCall(ctx, true); err != nil {
		return err
	}
	if db == nil {
		return invalid("db", "<nil>", "must not be nil", fence.ErrInvalid)
	}
	_, err = db.Exec(ctx, "ALTER TABLE "+t+" ADD COLUMN IF NOT EXISTS "+quote(DefaultColumn)+" bigint")
	if err != nil {
		return fmt.Errorf("pgfence: add column: %w", err)
	}
	return nil
}

// Update sets the given columns of the row whose key column equals key, and
// its fence column to token, if COALESCE(fence, 0) <= token. Column names are
// validated and quoted; values are sent as parameters. An empty set only
// marks the row with the token, which fences out older holders before work
// that writes elsewhere.
//
// It returns nil when the write was applied, an error matching fence.ErrStaleToken
// when the row has seen a larger token, fence.ErrNotFound when no row has the key,
// and a *fence.ValidationError for bad input. When ctx is a lock's context (or
// derived from one) whose trust window has passed, it sends nothing and
// returns an error matching baton.ErrLockLost. One round trip.
func (g *Guard) Update(ctx context.Context, db DB, token int64, key any, set map[string]any) error {
	if err := checkCall(ctx, g != nil && g.table != ""); err != nil {
		return err
	}
	cols := make([]string, 0, len(set))
	for c := range set {
		if err := checkIdent("set", c); err != nil {
			return err
		}
		if c == g.colRaw {
			return invalid("set", c, "is the fence column, which the guard writes", ErrInvalidIdentifier)
		}
		cols = append(cols, c)
	}
	slices.Sort(cols) // a stable statement text, for pgx's statement cache
	var b strings.Builder
	args := make([]any, 0, len(cols)+2)
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		args = append(args, set[c])
		b.WriteString(quote(c) + " = $" + strconv.Itoa(len(args)))
	}
	return g.exec(ctx, db, token, key, b.String(), args)
}

// Mark sets the fence column of the row to token if COALESCE(fence, 0) <=
// token, writing nothing else: from then on older holders' writes fail. Call
// it before reading data that a later guarded write depends on
// (read-modify-write); otherwise an older holder may still write between
// your read and your write, and your write, with its larger token, would
// overwrite that acknowledged write (a lost update). Results are as for
// Update.
func (g *Guard) Mark(ctx context.Context, db DB, token int64, key any) error {
	return g.exec(ctx, db, token, key, "", nil)
}

// Exec applies setSQL, the body of an UPDATE's SET clause such as
// "stock = stock - $1, updated_at = clock_timestamp()", to the row whose key
// column equals key, and sets its fence column to token, if
// COALESCE(fence, 0) <= token. Placeholders $1..$n in setSQL refer to args;
// the guard adds its own parameters after them.
//
// setSQL is SQL written by the program, never by its users: put every value
// in args. To keep it from reaching outside the SET clause, Exec rejects a
// fragment with a semicolon, a comment, a dollar-quoted string, unbalanced
// parentheses or quotes, or a placeholder beyond len(args), with a
// *fence.ValidationError matching ErrInvalidSQL.
//
// Results are as for Update. One round trip.
func (g *Guard) Exec(ctx context.Context, db DB, token int64, key any, setSQL string, args ...any) error {
	if strings.TrimSpace(setSQL) == "" {
		return invalid("setSQL", setSQL, "must not be empty (use Update with no columns to only mark the row)", ErrInvalidSQL)
	}
	if err := checkFragment(setSQL, len(args)); err != nil {
		return err
	}
	return g.exec(ctx, db, token, key, setSQL, args)
}

func (g *Guard) exec(ctx context.Context, db DB, token int64, key any, set string, args []any) error {
	if err := checkCall(ctx, g != nil && g.table != ""); err != nil {
		return err
	}
	if err := checkToken(token); err != nil {
		return err
	}
	if key == nil {
		return invalid("key", "<nil>", "must not be nil", fence.ErrInvalid)
	}
	if db == nil {
		return invalid("db", "<nil>", "must not be nil", fence.ErrInvalid)
	}
	if err := checkLease(ctx); err != nil {
		return err
	}
	tok := "$" + strconv.Itoa(len(args)+1)
	k := "$" + strconv.Itoa(len(args)+2)
	args = append(args, token, key)
	if set != "" {
		set += ",\n"
	}
	// The outer reads see the statement's snapshot, i.e. the row as it was
	// before the update: enough to tell a stale token from a missing row
	// in the same round trip.
	sql := "WITH upd AS (UPDATE " + g.table + " SET " + set + g.column + " = " + tok +
		" WHERE " + g.key + " = " + k + " AND COALESCE(" + g.column + ", 0) <= " + tok + " RETURNING 1)" +
		" SELECT EXISTS (SELECT 1 FROM upd), cur." + g.column + ", cur." + g.key + " IS NOT NULL" +
		" FROM (VALUES (1)) AS one LEFT JOIN " + g.table + " AS cur ON cur." + g.key + " = " + k
	var (
		applied, found bool
		last           *int64
	)
	if err := db.QueryRow(ctx, sql, args...).Scan(&applied, &last, &found); err != nil {
		return fmt.Errorf("pgfence: guarded update of %s: %w", g.table, err)
	}
	switch {
	case applied:
		return nil
	case !found:
		return fmt.Errorf("%w: %s.%s = %v", fence.ErrNotFound, g.table, g.key, key)
	case last != nil && *last > token:
		return stale(token, *last)
	}
	// The row existed with a fence the token passes, yet the update did
	// not apply: a concurrent transaction deleted or re-keyed it, or
	// raised its fence, while this statement waited for its row lock. Read
	// the row as it is now (rare path: a second round trip).
	err := db.QueryRow(ctx, "SELECT "+g.column+" FROM "+g.table+" WHERE "+g.key+" = $1", key).Scan(&last)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: %s.%s = %v", fence.ErrNotFound, g.table, g.key, key)
	case err != nil:
		return fmt.Errorf("pgfence: guarded update of %s: %w", g.table, err)
	case last != nil && *last > token:
		return stale(token, *last)
	}
	return fmt.Errorf("%w: %s.%s = %v", fence.ErrConflict, g.table, g.key, key)
}

// maxIdentLen is PostgreSQL's identifier length limit (NAMEDATALEN - 1);
// a longer name would be truncated silently.
const maxIdentLen = 63

func quote(ident string) string { return `"` + ident + `"` }

func quoteTable(table string) (string, error) {
	parts := strings.Split(table, ".")
	if len(parts) > 2 {
		return "", invalid("table", table, "must be table or schema.table", ErrInvalidIdentifier)
	}
	for i, p := range parts {
		if err := checkIdent("table", p); err != nil {
			return "", err
		}
		parts[i] = quote(p)
	}
	return strings.Join(parts, "."), nil
}

// checkIdent accepts plain identifiers only, so quoting cannot be escaped.
func checkIdent(field, s string) error {
	switch {
	case s == "":
		return invalid(field, s, "must not be empty", ErrInvalidIdentifier)
	case len(s) > maxIdentLen:
		return invalid(field, s, fmt.Sprintf("is longer than %d bytes", maxIdentLen), ErrInvalidIdentifier)
	case s[0] >= '0' && s[0] <= '9':
		return invalid(field, s, "must not start with a digit", ErrInvalidIdentifier)
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return invalid(field, s, fmt.Sprintf("contains %q; use letters, digits and underscores", r), ErrInvalidIdentifier)
		}
	}
	return nil
}

// checkFragment scans a SET-clause fragment outside of its string literals
// and quoted identifiers.
func checkFragment(s string, nargs int) error {
	bad := func(reason string) error { return invalid("setSQL", s, reason, ErrInvalidSQL) }
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			// E'...' strings treat backslash as an escape.
			esc := c == '\'' && i > 0 && (s[i-1] == 'E' || s[i-1] == 'e') && (i < 2 || !isIdentByte(s[i-2]))
			j := i + 1
			for ; j < len(s); j++ {
				if esc && s[j] == '\\' {
					j++
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote
						j++
						continue
					}
					break
				}
			}
			if j >= len(s) {
				return bad("has an unterminated quote")
			}
			i = j
		case c == ';':
			return bad("contains a semicolon")
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '/' && i+1 < len(s) && s[i+1] == '*':
			return bad("contains a comment")
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return bad("has unbalanced parentheses")
			}
		case c == '$':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 {
				if i > 0 && isIdentByte(s[i-1]) {
					continue // a $ inside an identifier
				}
				return bad("contains a dollar-quoted string; pass values as parameters")
			}
			n, err := strconv.Atoi(s[i+1 : j])
			if err != nil || n < 1 || n > nargs {
				return bad(fmt.Sprintf("uses placeholder %s but has %d arguments", s[i:j], nargs))
			}
			i = j - 1
		}
	}
	if depth != 0 {
		return bad("has unbalanced parentheses")
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
