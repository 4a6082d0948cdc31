// Package pgident validates and quotes the PostgreSQL identifiers (schema
// and table names) the Postgres-backed providers take from their
// configuration, so that they all accept the same names.
package pgident

import (
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/baton-go/baton/batontype"
)

// maxLen is NAMEDATALEN-1: PostgreSQL silently truncates longer
// identifiers, which would make two configured names the same table.
const maxLen = 63

// Check returns a *batontype.ValidationError for field unless v is a
// plain identifier: an ASCII letter or underscore followed by up to 62
// ASCII letters, digits or underscores.
func Check(field, v string) error {
	if plain(v) {
		return nil
	}
	q := strconv.Quote(v)
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	return &batontype.ValidationError{
		Field:  field,
		Value:  q,
		Reason: "must be a letter or underscore followed by up to 62 letters, digits or underscores",
		Err:    batontype.ErrInvalid,
	}
}

func plain(v string) bool {
	if len(v) == 0 || len(v) > maxLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Qualify returns the quoted name, qualified by schema unless schema is
// empty (then the search_path decides).
func Qualify(schema, name string) string {
	if schema == "" {
		return pgx.Identifier{name}.Sanitize()
	}
	return pgx.Identifier{schema, name}.Sanitize()
}
