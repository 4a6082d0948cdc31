package keyspace_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestValidatePrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix      string
		hashTag, ok bool
	}{
		{"baton:", true, true},
		{"", true, true},
		{strings.Repeat("a", keyspace.MaxPrefixLen), true, true},
		{strings.Repeat("a", keyspace.MaxPrefixLen+1), false, false},
		{"a{b}", false, true},
		{"a{b}", true, false},
		{"a}", true, false},
		{"a\x00", false, false},
		{"a\xff", false, false},
	} {
		err := keyspace.ValidatePrefix(tc.prefix, tc.hashTag)
		if tc.ok != (err == nil) {
			t.Errorf("ValidatePrefix(%q, %v) = %v, want ok=%v", tc.prefix, tc.hashTag, err, tc.ok)
		}
		var ve *batontype.ValidationError
		if err != nil && (!errors.Is(err, batontype.ErrInvalid) || !errors.As(err, &ve) || ve.Field != "Prefix") {
			t.Errorf("ValidatePrefix(%q, %v) = %#v, want a Prefix ValidationError", tc.prefix, tc.hashTag, err)
		}
	}
}

func TestTaggedUntag(t *testing.T) {
	for _, name := range []string{"job", "a}b", "100%", "%7D", "}{%25"} {
		key := keyspace.Tagged("p:", name, ":f")
		if strings.Count(key, "}") != 1 || !strings.HasPrefix(key, "p:{") || !strings.HasSuffix(key, "}:f") {
			t.Errorf("Tagged(%q) = %q: the tag must span the whole escaped name", name, key)
		}
		got, suffix, ok := keyspace.Untag("p:", key)
		if !ok || got != name || suffix != ":f" {
			t.Errorf("Untag(%q) = %q, %q, %v; want %q, \":f\", true", key, got, suffix, ok, name)
		}
	}
	for _, key := range []string{"q:{job}", "p:job", "p:{}", "p:{job"} {
		if name, _, ok := keyspace.Untag("p:", key); ok {
			t.Errorf("Untag(%q) = %q, true; want false", key, name)
		}
	}
}
