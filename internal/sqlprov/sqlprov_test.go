package sqlprov_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTables(t *testing.T) {
	if a, b := sqlprov.Tables("", ""); a != sqlprov.DefaultTable || b != sqlprov.DefaultRateTable {
		t.Errorf("defaults: %q, %q", a, b)
	}
	if a, b := sqlprov.Tables("l", "r"); a != "l" || b != "r" {
		t.Errorf("set: %q, %q", a, b)
	}
}

func TestFilesInNameOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"m/002_b.sql": {Data: []byte("B")},
		"m/001_a.sql": {Data: []byte("A")},
		"m/notes.txt": {Data: []byte("x")},
	}
	files, err := sqlprov.Files(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []sqlprov.File{{Name: "001_a.sql", Text: "A"}, {Name: "002_b.sql", Text: "B"}}
	if len(files) != len(want) || files[0] != want[0] || files[1] != want[1] {
		t.Errorf("Files = %v, want %v", files, want)
	}
}

func TestRender(t *testing.T) {
	s, err := sqlprov.Render("p", "f.sql", "{{.T}} {{up .T}}", map[string]any{"up": strings.ToUpper}, struct{ T string }{"x"})
	if err != nil || s != "x X" {
		t.Errorf("Render = %q, %v", s, err)
	}
	if _, err := sqlprov.Render("p", "f.sql", "{{.Missing}}", nil, struct{ T string }{"x"}); err == nil || !strings.HasPrefix(err.Error(), "p: render f.sql: ") {
		t.Errorf("missing field: %v", err)
	}
	if _, err := sqlprov.Render("p", "f.sql", "{{", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "p: parse f.sql: ") {
		t.Errorf("bad template: %v", err)
	}
}

func TestNewRefusesNilHandles(t *testing.T) {
	resolve := func(*struct{}) (string, error) { return "n", nil }
	render := func(string) (int, error) { return 1, nil }
	var typedNil *sql.DB
	for _, db := range []any{nil, typedNil} {
		_, _, _, err := sqlprov.New("p", db, nil, resolve, render)
		var ve *batontype.ValidationError
		if !errors.As(err, &ve) || ve.Pkg != "p" || ve.Field != "db" || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("db %#v: %v", db, err)
		}
	}
	if _, n, m, err := sqlprov.New("p", &sql.DB{}, nil, resolve, render); err != nil || n != "n" || m != 1 {
		t.Errorf("valid: %q, %d, %v", n, m, err)
	}
}

func TestInspected(t *testing.T) {
	wrap := func(op, name string, err error) error { return errors.New(op + " " + name + ": " + err.Error()) }
	if i, err := sqlprov.Inspected("n", nil, nil, wrap); err != nil || i != (batontype.LeaseInfo{Name: "n"}) {
		t.Errorf("absent: %+v, %v", i, err)
	}
	held := batontype.LeaseInfo{Name: "n", Exists: true, Held: true}
	if i, err := sqlprov.Inspected("n", []batontype.LeaseInfo{held}, nil, wrap); err != nil || i != held {
		t.Errorf("held: %+v, %v", i, err)
	}
	if _, err := sqlprov.Inspected("n", nil, errors.New("boom"), wrap); err == nil || err.Error() != "inspect n: boom" {
		t.Errorf("failed: %v", err)
	}
}
