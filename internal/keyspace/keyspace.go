// Package keyspace holds the key-prefix validation and the Redis hash-tag key
// layout shared by the key-value providers (redis, redlock, etcd), so that
// they accept the same prefixes and spell the same keys.
package keyspace

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/baton-go/baton/batontype"
)

// MaxPrefixLen bounds a provider's key prefix, in bytes.
const MaxPrefixLen = 100

// ValidatePrefix checks a provider's Config.Prefix: at most MaxPrefixLen
// bytes of printable UTF-8. With hashTag set it also rejects '{' and '}',
// which would change the Redis Cluster hash tag of every key (see Tagged).
func ValidatePrefix(s string, hashTag bool) error {
	reason := ""
	switch {
	case len(s) > MaxPrefixLen:
		reason = "is longer than 100 bytes"
	case !utf8.ValidString(s):
		reason = "is not valid UTF-8"
	case hashTag && strings.ContainsAny(s, "{}"):
		reason = "contains '{' or '}', reserved for the hash tag"
	default:
		for _, r := range s {
			if !unicode.IsPrint(r) {
				reason = "contains a non-printable character"
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return &batontype.ValidationError{Field: "Prefix", Value: strconv.Quote(s), Reason: reason, Err: batontype.ErrInvalid}
}

// Prefix returns def for an empty s, and otherwise s once ValidatePrefix
// accepts it: a provider's Config.Prefix as used.
func Prefix(s, def string, hashTag bool) (string, error) {
	if s == "" {
		return def, nil
	}
	if err := ValidatePrefix(s, hashTag); err != nil {
		return "", err
	}
	return s, nil
}

// Tagged returns prefix{N}suffix, a key of name N whose hash tag is N, so
// that all of a name's keys share one Redis Cluster slot. '}' would end the
// tag early and '%' is the escape, so both are escaped in N; Untag inverts
// the escaping. The suffix is part of the one concatenation so that a
// caller needing both prefix{N} and prefix{N}suffix can slice the first out
// of the second without another allocation.
func Tagged(prefix, name, suffix string) string {
	if strings.ContainsAny(name, "%}") {
		name = strings.NewReplacer("%", "%25", "}", "%7D").Replace(name)
	}
	return prefix + "{" + name + "}" + suffix
}

// Untag splits a key built by Tagged plus a suffix into the name and the
// suffix; ok is false when key is not of that form.
func Untag(prefix, key string) (name, suffix string, ok bool) {
	rest, ok := strings.CutPrefix(key, prefix+"{")
	if !ok {
		return "", "", false
	}
	name, suffix, ok = strings.Cut(rest, "}")
	if !ok || name == "" {
		return "", "", false
	}
	if strings.Contains(name, "%") {
		name = strings.NewReplacer("%25", "%", "%7D", "}").Replace(name)
	}
	return name, suffix, true
}

// Int reads an integer from a Redis script's reply as the go-redis
// clients decode it (an int64, or a string for a value the script returned
// as a bulk string); ok is false for anything else, such as a missing
// value.
func Int(v any) (n int64, ok bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}
