package pgfence_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func mustInvalid(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	var ve *fence.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, sentinel) || !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("%s: got %v, want a *ValidationError matching %v", what, err, sentinel)
	}
}

func TestGuardBadIdentifiers(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"", `t"x`, "t;drop", "a b", "1t", "a.b.c", "a.", ".a", strings.Repeat("t", 64), "tä"} {
		_, err := pgfence.NewGuard(table, "id", nil)
		mustInvalid(t, "table "+table, err, pgfence.ErrInvalidIdentifier)
		mustInvalid(t, "AddColumn "+table, pgfence.AddColumn(context.Background(), nil, table), pgfence.ErrInvalidIdentifier)
	}
	for _, col := range []string{"", `id"`, "id--", "x y"} {
		_, err := pgfence.NewGuard("t", col, nil)
		mustInvalid(t, "key column "+col, err, pgfence.ErrInvalidIdentifier)
		_, err = pgfence.NewGuard("t", "id", &pgfence.GuardConfig{Column: col + "!"})
		mustInvalid(t, "fence column "+col, err, pgfence.ErrInvalidIdentifier)
	}
	_, err := pgfence.NewGuard("t", "id", &pgfence.GuardConfig{Column: "id"})
	mustInvalid(t, "fence column = key column", err, pgfence.ErrInvalidIdentifier)
	if _, err := pgfence.NewGuard("public.Items_2", "item_id", nil); err != nil {
		t.Errorf("valid identifiers rejected: %v", err)
	}
}

// The checks run before any round trip: no database is needed.
func TestGuardBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, err := pgfence.NewGuard("t", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []int64{0, -1, math.MinInt64} {
		mustInvalid(t, "token", g.Mark(ctx, nil, tok, 1), fence.ErrInvalidToken)
		mustInvalid(t, "token", g.Update(ctx, nil, tok, 1, map[string]any{"v": 1}), fence.ErrInvalidToken)
	}
	mustInvalid(t, "nil key", g.Mark(ctx, nil, 1, nil), fence.ErrInvalid)
	mustInvalid(t, "nil db", g.Mark(ctx, nil, 1, 1), fence.ErrInvalid)
	mustInvalid(t, "nil db", g.AddColumn(ctx, nil), fence.ErrInvalid)
	mustInvalid(t, "set column", g.Update(ctx, nil, 1, 1, map[string]any{`v"; drop table t; --`: 1}), pgfence.ErrInvalidIdentifier)
	mustInvalid(t, "set fence column", g.Update(ctx, nil, 1, 1, map[string]any{"last_fence": 1}), pgfence.ErrInvalidIdentifier)
	for frag, n := range map[string]int{
		"":                                0,
		"  ":                              0,
		"v = 1; DROP TABLE t":             0,
		"v = 1 -- rest":                   0,
		"v = 1 /* x */":                   0,
		"v = (1":                          0,
		"v = 1)":                          0,
		"v = 'x":                          0,
		`"v = 1`:                          0,
		"v = $$x$$":                       0,
		"v = $tag$x$tag$":                 0,
		"v = $2":                          1,
		"v = $0":                          1,
		"v = $1, w = $3":                  2,
		"v = (SELECT 1) WHERE true OR ((": 0,
	} {
		err := g.Exec(ctx, nil, 1, 1, frag, make([]any, n)...)
		mustInvalid(t, "fragment "+frag, err, pgfence.ErrInvalidSQL)
	}
}

// A nil ctx or a zero Guard reaching pgx would panic in the driver; with a
// real pool they are refused before the round trip.
func TestGuardNilContextAndZeroGuard(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ctx := context.Background()
	g, err := pgfence.NewGuard(pg.Schema+".t", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	mustInvalid(t, "Update nil ctx", g.Update(nilCtx, pg.Pool, 1, 1, map[string]any{"v": 1}), fence.ErrInvalid)
	mustInvalid(t, "Exec nil ctx", g.Exec(nilCtx, pg.Pool, 1, 1, "v = 1"), fence.ErrInvalid)
	mustInvalid(t, "Mark nil ctx", g.Mark(nilCtx, pg.Pool, 1, 1), fence.ErrInvalid)
	mustInvalid(t, "AddColumn nil ctx", g.AddColumn(nilCtx, pg.Pool), fence.ErrInvalid)
	mustInvalid(t, "package AddColumn nil ctx", pgfence.AddColumn(nilCtx, pg.Pool, pg.Schema+".t"), fence.ErrInvalid)
	var zero pgfence.Guard
	mustInvalid(t, "zero Guard Update", zero.Update(ctx, pg.Pool, 1, 1, map[string]any{"v": 1}), fence.ErrInvalid)
	mustInvalid(t, "zero Guard AddColumn", zero.AddColumn(ctx, pg.Pool), fence.ErrInvalid)
	var nilGuard *pgfence.Guard
	mustInvalid(t, "nil Guard Mark", nilGuard.Mark(ctx, pg.Pool, 1, 1), fence.ErrInvalid)
}

func TestGuard(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ctx := context.Background()
	db := pg.Pool
	if _, err := db.Exec(ctx, `CREATE TABLE items (item_id text PRIMARY KEY, stock int NOT NULL, note text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO items VALUES ('a', 10, NULL), ('b', 5, NULL)`); err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := pgfence.AddColumn(ctx, db, pg.Schema+".items"); err != nil {
			t.Fatal(err)
		}
	}
	g, err := pgfence.NewGuard("items", "item_id", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.AddColumn(ctx, db); err != nil {
		t.Fatal(err)
	}
	row := func(key string) (stock int, last *int64) {
		t.Helper()
		if err := db.QueryRow(ctx, `SELECT stock, last_fence FROM items WHERE item_id = $1`, key).Scan(&stock, &last); err != nil {
			t.Fatal(err)
		}
		return stock, last
	}

	// A NULL fence reads as 0.
	if err := g.Exec(ctx, db, 5, "a", "stock = stock - $1", 3); err != nil {
		t.Fatalf("first guarded write: %v", err)
	}
	if s, f := row("a"); s != 7 || f == nil || *f != 5 {
		t.Fatalf("after token 5: stock %d fence %v", s, f)
	}
	// Equal tokens are accepted.
	if err := g.Update(ctx, db, 5, "a", map[string]any{"stock": 6, "note": "five"}); err != nil {
		t.Fatalf("equal token: %v", err)
	}
	// A lower token is refused and writes nothing.
	err = g.Exec(ctx, db, 4, "a", "stock = 0")
	if !errors.Is(err, fence.ErrStaleToken) || !strings.Contains(err.Error(), "seen 5") {
		t.Fatalf("stale token: %v", err)
	}
	if s, f := row("a"); s != 6 || *f != 5 {
		t.Fatalf("after refused write: stock %d fence %d", s, *f)
	}
	// A missing row is a different error.
	if err := g.Mark(ctx, db, 9, "zzz"); !errors.Is(err, fence.ErrNotFound) || errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("missing row: %v", err)
	}
	// Mark raises the fence only.
	if err := g.Mark(ctx, db, 7, "a"); err != nil {
		t.Fatal(err)
	}
	if s, f := row("a"); s != 6 || *f != 7 {
		t.Fatalf("after Mark: stock %d fence %d", s, *f)
	}
	if err := g.Update(ctx, db, 6, "a", nil); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("write below the mark: %v", err)
	}

	// Inside the caller's transaction: rolled back with it.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Exec(ctx, tx, 8, "b", "stock = $1", 1); err != nil {
		t.Fatal(err)
	}
	if err := g.Exec(ctx, tx, 7, "b", "stock = $1", 2); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("stale inside tx: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if s, f := row("b"); s != 5 || f != nil {
		t.Fatalf("after rollback: stock %d fence %v", s, f)
	}

	// A schema-qualified table and a custom column.
	g2, err := pgfence.NewGuard(pg.Schema+".items", "item_id", &pgfence.GuardConfig{Column: "epoch"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.AddColumn(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := g2.Update(ctx, db, 1, "b", map[string]any{"stock": 4}); err != nil {
		t.Fatal(err)
	}
	if s, _ := row("b"); s != 4 {
		t.Fatalf("custom column guard: stock %d", s)
	}
	// Quotes, semicolons and comment markers inside literals are text.
	if err := g.Exec(ctx, db, 9, "b", `note = E'it\'s; -- /* fine' || 'x''y;' || "item_id"`); err != nil {
		t.Fatalf("literals in a fragment: %v", err)
	}
	var note string
	if err := db.QueryRow(ctx, `SELECT note FROM items WHERE item_id = 'b'`).Scan(&note); err != nil || note != "it's; -- /* finex'y;b" {
		t.Fatalf("note %q (%v)", note, err)
	}
	// A misspelt column is a database error, not a validation error.
	if err := g.Update(ctx, db, 9, "b", map[string]any{"stok": 1}); err == nil || errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("unknown column: %v", err)
	}
}

// A writer whose snapshot predates a concurrent commit of a larger token
// still gets ErrStaleToken: the rare path that reads the row again.
func TestGuardConcurrentRaise(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ctx := context.Background()
	db := pg.Pool
	if _, err := db.Exec(ctx, `CREATE TABLE acct (id int PRIMARY KEY, balance int NOT NULL, last_fence bigint)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO acct VALUES (1, 100, 3)`); err != nil {
		t.Fatal(err)
	}
	g, err := pgfence.NewGuard("acct", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := g.Exec(ctx, tx, 10, 1, "balance = balance + 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Exec(ctx, db, 5, 1, "balance = balance + 100") }()
	// Wait until the second writer is blocked on the row lock.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the second writer never waited for the row lock")
		}
		select {
		case err := <-done:
			t.Fatalf("the second writer did not wait for the row lock: %v", err)
		default:
		}
		var waiting bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH upd AS (UPDATE "acct"%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("blocked writer with an older token: %v", err)
	}
	var bal int
	if err := db.QueryRow(ctx, `SELECT balance FROM acct`).Scan(&bal); err != nil || bal != 101 {
		t.Fatalf("balance %d (%v), want 101", bal, err)
	}
}

// Without Mark, an older holder's write can land between a newer holder's
// read and write; the newer write then overwrites it (a lost update, though
// both were accepted). Marking before the read closes the gap.
func TestGuardReadModifyWrite(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ctx := context.Background()
	db := pg.Pool
	if _, err := db.Exec(ctx, `CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL, last_fence bigint)`); err != nil {
		t.Fatal(err)
	}
	g, err := pgfence.NewGuard("counter", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func() int {
		var n int
		if err := db.QueryRow(ctx, `SELECT n FROM counter WHERE id = 1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, mark := range []bool{false, true} {
		if _, err := db.Exec(ctx, `DELETE FROM counter; INSERT INTO counter VALUES (1, 0, NULL)`); err != nil {
			t.Fatal(err)
		}
		acked := 0
		// Old holder (token 1) read 0 before it paused.
		oldRead := read()
		// New holder (token 2) reads, optionally after marking.
		if mark {
			if err := g.Mark(ctx, db, 2, 1); err != nil {
				t.Fatal(err)
			}
		}
		newRead := read()
		// The old holder wakes and writes.
		if err := g.Update(ctx, db, 1, 1, map[string]any{"n": oldRead + 1}); err == nil {
			acked++
		} else if !errors.Is(err, fence.ErrStaleToken) {
			t.Fatal(err)
		}
		if err := g.Update(ctx, db, 2, 1, map[string]any{"n": newRead + 1}); err != nil {
			t.Fatal(err)
		}
		acked++
		if n := read(); mark && n != acked || !mark && n == acked {
			t.Errorf("mark=%v: counter %d, %d acknowledged increments", mark, n, acked)
		}
	}
}
