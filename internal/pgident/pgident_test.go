package pgident_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/pgident"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestCheck(t *testing.T) {
	for _, v := range []string{"a", "_", "baton_locks", "T1", strings.Repeat("x", 63)} {
		if err := pgident.Check("Table", v); err != nil {
			t.Errorf("Check(%q) = %v, want nil", v, err)
		}
	}
	for _, v := range []string{"", "1a", "a-b", "a b", "é", "a\n", `a"b`, strings.Repeat("x", 64)} {
		err := pgident.Check("Table", v)
		var ve *batontype.ValidationError
		if !errors.Is(err, batontype.ErrInvalid) || !errors.As(err, &ve) || ve.Field != "Table" {
			t.Errorf("Check(%q) = %v, want a Table ValidationError", v, err)
		}
	}
}

func TestQualify(t *testing.T) {
	if got, want := pgident.Qualify("", "locks"), `"locks"`; got != want {
		t.Errorf("Qualify(\"\", locks) = %s, want %s", got, want)
	}
	if got, want := pgident.Qualify("s", "locks"), `"s"."locks"`; got != want {
		t.Errorf("Qualify(s, locks) = %s, want %s", got, want)
	}
}
