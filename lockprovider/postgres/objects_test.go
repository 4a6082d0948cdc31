package postgres_test

import (
	"context"
	"slices"
	"testing"
)

// Migrate creates exactly the objects README.md and docs/operations.md
// list, in the schema the connection's search_path names first when
// Config.Schema is empty.
func TestMigrateCreatesTheDocumentedObjects(t *testing.T) {
	t.Parallel()
	_, pg := newProvider(t, nil)
	rows, err := pg.Pool.Query(context.Background(), `
		SELECT c.relkind::text || ' ' || c.relname || CASE WHEN c.relpersistence = 'u' THEN ' unlogged' ELSE '' END
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')
		UNION ALL
		SELECT 'f ' || p.proname
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = $1
		ORDER BY 1`, pg.Schema)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"f baton_locks_runs_trim",
		"f baton_rates_take",
		"i baton_locks_paused_pkey",
		"i baton_locks_pkey",
		"i baton_locks_reg_pkey",
		"i baton_locks_resumed_pkey",
		"i baton_locks_runq_pkey",
		"i baton_locks_runs_pkey",
		"i baton_locks_waiters_pkey",
		"i baton_rates_expires unlogged",
		"i baton_rates_pkey unlogged",
		"r baton_locks",
		"r baton_locks_paused",
		"r baton_locks_reg",
		"r baton_locks_resumed",
		"r baton_locks_runq",
		"r baton_locks_runs",
		"r baton_locks_waiters",
		"r baton_rates unlogged",
	}
	if !slices.Equal(got, want) {
		t.Errorf("objects in schema %s after Migrate:\n got %q\nwant %q (update README.md quickstart 2 and docs/operations.md if this changed on purpose)", pg.Schema, got, want)
	}
}
