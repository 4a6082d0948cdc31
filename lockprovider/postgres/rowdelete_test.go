package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// An operator may delete the row of a name nobody holds (docs/operations.md):
// the next grant starts a new row whose token is the server time in
// microseconds, larger than every token the deleted row handed out, so a
// fenced resource still refuses the old holders.
func TestDeletedRowTokenKeepsIncreasing(t *testing.T) {
	t.Parallel()
	p, pg := newProvider(t, nil)
	ctx := context.Background()
	name := "deleted-row"
	var last int64
	for range 3 {
		l, err := p.Acquire(ctx, params(name, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: l.Owner}); err != nil {
			t.Fatal(err)
		}
		last = l.Token
	}
	table := pgx.Identifier{pg.Schema, postgres.DefaultTable}.Sanitize()
	if tag, err := pg.Pool.Exec(ctx, "DELETE FROM "+table+" WHERE name = $1", name); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("delete the row: %v %v", tag, err)
	}
	before := serverNow(t, pg.Pool)
	l, err := p.Acquire(ctx, params(name, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if l.Token <= last {
		t.Fatalf("token %d after the row was deleted; want more than %d, the last before", l.Token, last)
	}
	if l.Token < before.UnixMicro() {
		t.Errorf("token %d of the new row; want at least the server time in µs (%d)", l.Token, before.UnixMicro())
	}
}
