package mysql_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// An Extend or a Release that waits behind a force-release's row lock must
// find the lease ended, though it ended after the waiting statement began:
// the force-release sticks, and the holder's call reports ErrNotHeld. The
// waiting call is let go only once InnoDB shows it blocked by the
// force-release's transaction, so the order is fixed, not timed.
func TestOwnerCallBehindForceReleaseFindsItEnded(t *testing.T) {
	calls := map[string]func(context.Context, *mysql.Provider, lockprovider.AcquireParams) error{
		"extend": func(ctx context.Context, p *mysql.Provider, ap lockprovider.AcquireParams) error {
			_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: ap.Name, Owner: ap.Owner, AtMostFor: 10 * time.Second})
			return err
		},
		"release": func(ctx context.Context, p *mysql.Provider, ap lockprovider.AcquireParams) error {
			return p.Release(ctx, lockprovider.ReleaseParams{Name: ap.Name, Owner: ap.Owner})
		},
	}
	for name, call := range calls {
		// Not parallel: two polls of InnoDB's lock tables slow each other (mysqlenv.Blocked).
		t.Run(name, func(t *testing.T) {
			p, my := newProvider(t, nil)
			ctx := t.Context()
			ap := params("raced", 10*time.Second)
			if _, err := p.Acquire(ctx, ap); err != nil {
				t.Fatal(err)
			}
			tx, err := my.DB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			var conn int64
			if _, err := tx.ExecContext(ctx, "SELECT 1 FROM "+mysql.DefaultTable+" WHERE name = ? FOR UPDATE", ap.Name); err != nil {
				t.Fatal(err)
			}
			if err := tx.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&conn); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- call(ctx, p, ap) }()
			mysqlenv.Blocked(t, ctx, my.DB, conn, done)
			inTx, err := mysql.New(tx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := inTx.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: ap.Name, By: "test"}); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, batontype.ErrNotHeld) {
				t.Fatalf("%s behind the force-release: %v, want ErrNotHeld", name, err)
			}
			info, err := p.Inspect(ctx, ap.Name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Held {
				t.Errorf("after the force-release and the %s: held until %v", name, info.Until)
			}
		})
	}
}
