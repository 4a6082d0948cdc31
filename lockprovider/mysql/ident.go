package mysql

import (
	"strconv"

	"github.com/baton-go/baton/batontype"
)

// maxIdentLen is the server's limit on table and routine names.
const maxIdentLen = 64

// checkIdent accepts names of ASCII letters, digits and underscores, not
// starting with a digit, of at most max bytes: names that need no quoting
// on any server and mean the same whatever lower_case_table_names says
// about their case on disk. They are quoted anyway.
func checkIdent(field, s string, max int) error {
	reason := ""
	switch {
	case s == "":
		reason = "must not be empty"
	case len(s) > max:
		reason = "must be at most " + strconv.Itoa(max) + " bytes"
	case s[0] >= '0' && s[0] <= '9':
		reason = "must not start with a digit"
	default:
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				reason = "must hold only ASCII letters, digits and underscores"
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	v := s
	if len(v) > 70 {
		v = v[:70] + "…"
	}
	return &batontype.ValidationError{Pkg: "mysql", Field: field, Value: strconv.Quote(v), Reason: reason, Err: batontype.ErrInvalid}
}

// qualify quotes name, qualified by database when that is not empty.
func qualify(database, name string) string {
	if database == "" {
		return "`" + name + "`"
	}
	return "`" + database + "`.`" + name + "`"
}
