package shedlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// A provider whose Columns contradict the table (timestamp declared, the
// Java fleet's table is timestamptz) is usable before any Check, but once
// Migrate refuses it with ErrTimeMode a caller that ignores the error
// must not take a name a Java replica holds: every operation that touches
// the table returns the refusal until a Check passes, here after the
// table's columns were changed to what the configuration says.
func TestFaultPostgresIgnoredRefusalStaysRefused(t *testing.T) {
	pg := pgenv.Schema(t)
	ctx := t.Context()
	if _, err := pg.Pool.Exec(ctx, `CREATE TABLE shedlock (name varchar(64) PRIMARY KEY, lock_until timestamptz NOT NULL,
		locked_at timestamptz NOT NULL, locked_by varchar(255) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const hold = 10 * time.Second
	java := newJavaPG(t, pg, shedlock.DBTime, nil)
	if _, ok, err := java.lock(ctx, "job", hold); err != nil || !ok {
		t.Fatalf("Java lock: %v, %v", ok, err)
	}

	// The Go replica's sessions are in Asia/Kathmandu (UTC+5:45).
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = "Asia/Kathmandu"
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	p, err := shedlock.NewPostgres(db, &shedlock.PostgresConfig{TimeMode: shedlock.DBTime, Columns: shedlock.Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Fatalf("Migrate: %v, want ErrTimeMode", err)
	}
	refused := func(when string) {
		t.Helper()
		owner := lockprovider.NewOwner()
		ops := map[string]error{}
		_, ops["Acquire"] = p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: owner, AtMostFor: time.Minute})
		_, ops["Extend"] = p.Extend(ctx, lockprovider.ExtendParams{Name: "job", Owner: owner, AtMostFor: time.Minute})
		ops["Release"] = p.Release(ctx, lockprovider.ReleaseParams{Name: "job", Owner: owner})
		_, ops["Inspect"] = p.Inspect(ctx, "job")
		_, ops["List"] = p.List(ctx)
		stop, err := p.NotifyRelease(ctx, "job", make(chan struct{}, 1))
		if stop != nil {
			stop()
		}
		ops["NotifyRelease"] = err
		_, ops["ExportTokens"] = p.ExportTokens(ctx, "", "")
		for op, err := range ops {
			if !errors.Is(err, shedlock.ErrTimeMode) || !errors.Is(err, batontype.ErrInvalid) || !errors.Is(err, shedlock.ErrNotReady) {
				t.Errorf("%s, %s: %v, want the refusal (ErrTimeMode, ErrInvalid, ErrNotReady)", when, op, err)
			}
		}
	}
	refused("after Migrate refused")
	if err := p.Check(ctx); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Fatalf("Check: %v, want ErrTimeMode", err)
	}
	refused("after Check refused again")

	// The table made what the configuration says: Check passes, and the
	// Java replica's hold is read correctly.
	if _, err := pg.Pool.Exec(ctx, `ALTER TABLE shedlock
		ALTER lock_until TYPE timestamp USING lock_until AT TIME ZONE 'UTC',
		ALTER locked_at TYPE timestamp USING locked_at AT TIME ZONE 'UTC'`); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx); err != nil {
		t.Fatalf("Check after the fix: %v", err)
	}
	if _, err := acquirePG(ctx, p, "job"); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("Acquire of the Java replica's lock after the fix: %v, want ErrNotAcquired", err)
	}
	if _, err := acquirePG(ctx, p, "other"); err != nil {
		t.Errorf("Acquire of a free name after the fix: %v", err)
	}
}

// A provider that passed Check and then finds the table changed under it
// (a column of its own dropped) is refused from that Check on, and usable
// again once a Check passes.
func TestFaultPostgresLaterRefusalStaysRefused(t *testing.T) {
	p, pg := newPG(t, shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
	ctx := t.Context()
	if _, err := acquirePG(ctx, p, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Pool.Exec(ctx, "ALTER TABLE shedlock DROP COLUMN last_tick"); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx); err == nil {
		t.Fatal("Check without last_tick passed")
	}
	if _, err := acquirePG(ctx, p, "b"); !errors.Is(err, shedlock.ErrNotReady) {
		t.Errorf("Acquire after Check refused: %v, want ErrNotReady", err)
	}
	// A Check that cannot reach the table says nothing about it.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Check(canceled); err == nil {
		t.Fatal("Check with a canceled context passed")
	}
	if _, err := acquirePG(ctx, p, "b"); !errors.Is(err, shedlock.ErrNotReady) {
		t.Errorf("Acquire after a canceled Check: %v, want the earlier refusal", err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if _, err := acquirePG(ctx, p, "b"); err != nil {
		t.Errorf("Acquire after Migrate passed: %v", err)
	}
}

func acquirePG(ctx context.Context, p *shedlock.Postgres, name string) (batontype.Lease, error) {
	return p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
}
