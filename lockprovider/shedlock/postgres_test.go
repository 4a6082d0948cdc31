package shedlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// newYork is the negative-offset zone with DST that the JVM-local-time
// tests use.
func newYork(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	return loc
}

// pgModes are the Java configurations every Postgres test runs against.
func pgModes(t testing.TB) []struct {
	name string
	cfg  shedlock.PostgresConfig
} {
	return []struct {
		name string
		cfg  shedlock.PostgresConfig
	}{
		{"DBTime", shedlock.PostgresConfig{TimeMode: shedlock.DBTime}},
		{"DBTimeTimestamptz", shedlock.PostgresConfig{TimeMode: shedlock.DBTime, JavaZone: time.UTC, Columns: shedlock.Timestamptz}},
		{"ClientTimeUTC", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeUTC}},
		{"ClientTimeNewYork", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: newYork(t)}},
		{"ClientTimeNewYorkTimestamptz", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: newYork(t), Columns: shedlock.Timestamptz}},
	}
}

// newPG returns a migrated provider on a ShedLock table in a private schema.
func newPG(t testing.TB, cfg shedlock.PostgresConfig) (*shedlock.Postgres, *pgenv.PG) {
	t.Helper()
	pg := pgenv.Schema(t)
	p, err := shedlock.NewPostgres(pg.Pool, &cfg)
	if err != nil {
		t.Fatalf("NewPostgres: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, pg
}

func TestPostgresConformance(t *testing.T) {
	t.Parallel()
	for _, m := range pgModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode on a schema of its own
			lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
				p, _ := newPG(t, m.cfg)
				return p
			}, lockprovidertest.WithHistory(history.Config{TickAfterGrant: true, RowLocks: true}))
		})
	}
}

// Two baton replicas and a replayed ShedLock replica share one job on
// ShedLock's table, in every time mode of the Java fleet.
func TestPostgresInterleavedWithJava(t *testing.T) {
	t.Parallel()
	for _, m := range pgModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode on a schema of its own
			p1, pg := newPG(t, m.cfg)
			p2, err := shedlock.NewPostgres(pg.Pool, &m.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := p2.Check(t.Context()); err != nil {
				t.Fatal(err)
			}
			java := newJavaPG(t, pg, m.cfg.TimeMode, m.cfg.JavaZone)
			interleave(t, "report", java, [2]lockprovider.Provider{p1, p2})
		})
	}
}

// A JVM in New York without forceUtcTimeZone() writes New York wall-clock
// times (UTC-5 or UTC-4) into timestamp columns. Read as UTC they would
// look hours in the past, so every Java lock would look expired: the
// provider configured with the Java zone must see them held, and the
// misreading configuration is shown to be exactly that hazard.
func TestPostgresJavaLocalTimeNegativeOffset(t *testing.T) {
	t.Parallel()
	ny := newYork(t)
	cfg := shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: ny}
	p, pg := newPG(t, cfg)
	ctx := t.Context()
	java := newJavaPG(t, pg, shedlock.ClientTimeZone, ny)

	_, ok, err := java.lock(ctx, "nightly", time.Minute)
	if err != nil || !ok {
		t.Fatalf("java lock: %v %v", ok, err)
	}
	// The replayed statement stored New York wall-clock time; ShedLock
	// reads the clock for locked_at after createdAt.
	var lockedAt time.Time
	if err := pg.Pool.QueryRow(ctx, "SELECT locked_at FROM shedlock WHERE name = 'nightly'").Scan(&lockedAt); err != nil {
		t.Fatal(err)
	}
	wantWall := java.lockedAt.In(ny)
	if got := time.Date(lockedAt.Year(), lockedAt.Month(), lockedAt.Day(), lockedAt.Hour(), lockedAt.Minute(), lockedAt.Second(), lockedAt.Nanosecond(), ny); !got.Equal(wantWall) {
		t.Fatalf("stored locked_at %v, want the New York wall time of %v", lockedAt, wantWall)
	}

	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
	if !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire of a lock a New York JVM holds: %v, want ErrNotAcquired", err)
	}
	info, err := p.Inspect(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Held || info.LockedBy != "java-host" || !info.GrantedAt.Equal(java.lockedAt) {
		t.Errorf("Inspect = %+v, want held by java-host since %v", info, java.lockedAt)
	}

	// The same row read as UTC wall time (the wrong configuration) looks
	// free: that reading would run the job twice.
	wrong, err := shedlock.NewPostgres(pg.Pool, &shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeUTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Acquire(ctx, lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}); err != nil {
		t.Fatalf("control: a provider reading New York times as UTC should wrongly acquire, got %v", err)
	}

	// And the other way: a Go grant written in New York time holds off the
	// JVM, and the JVM's unlock honours lockAtLeastFor from New York time.
	name := "hourly"
	owner := lockprovider.NewOwner()
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: time.Minute, AtLeastFor: atLeastHold}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := java.lock(ctx, name, time.Minute); err != nil || ok {
		t.Fatalf("java lock of a name Go holds: %v %v, want refused", ok, err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := java.lock(ctx, name, time.Minute); err != nil || ok {
		t.Fatalf("java lock inside Go's lockAtLeastFor: %v %v, want refused", ok, err)
	}
	time.Sleep(atLeastHold + 50*time.Millisecond) // Go's lockAtLeastFor passes
	jc, ok, err := java.lock(ctx, name, time.Minute)
	if err != nil || !ok {
		t.Fatalf("java lock after Go's lockAtLeastFor: %v %v, want acquired", ok, err)
	}
	if err := java.unlock(ctx, name, jc, atLeastHold); err != nil {
		t.Fatal(err)
	}
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
	if !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire inside the JVM's lockAtLeastFor: %v, want ErrNotAcquired", err)
	}
	time.Sleep(atLeastHold + 50*time.Millisecond) // the JVM's lockAtLeastFor passes
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}); err != nil {
		t.Fatalf("Acquire after the JVM's lockAtLeastFor: %v", err)
	}
}

// Configurations that could misread the Java fleet's times are refused at
// start with an error matching ErrTimeMode and batontype.ErrInvalid.
func TestPostgresRefusesUnsafeTimeConfig(t *testing.T) {
	t.Parallel()
	pg := pgenv.Schema(t)
	ny := newYork(t)
	for _, c := range []struct {
		what string
		cfg  shedlock.PostgresConfig
	}{
		{"no time mode", shedlock.PostgresConfig{}},
		{"unknown time mode", shedlock.PostgresConfig{TimeMode: 42}},
		{"JVM zone time without the zone", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone}},
		{"this host's zone", shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: time.Local}},
		{"DB time on timestamptz in a JVM session zone off UTC", shedlock.PostgresConfig{TimeMode: shedlock.DBTime, JavaZone: ny, Columns: shedlock.Timestamptz}},
		{"DB time on timestamptz without the JVM zone", shedlock.PostgresConfig{TimeMode: shedlock.DBTime, Columns: shedlock.Timestamptz}},
	} {
		_, err := shedlock.NewPostgres(pg.Pool, &c.cfg)
		if !errors.Is(err, shedlock.ErrTimeMode) || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("%s: NewPostgres error %v, want ErrTimeMode", c.what, err)
		}
	}

	// Detected: the same refusal when the table turns out to be timestamptz.
	p, err := shedlock.NewPostgres(pg.Pool, &shedlock.PostgresConfig{TimeMode: shedlock.DBTime, JavaZone: ny, Table: "tz_locks", Columns: shedlock.DetectColumns})
	if err != nil {
		t.Fatalf("NewPostgres before detection: %v", err)
	}
	if _, err := pg.Pool.Exec(t.Context(), "CREATE TABLE tz_locks (name varchar(64) PRIMARY KEY, lock_until timestamptz NOT NULL, locked_at timestamptz NOT NULL, locked_by varchar(255) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Errorf("Migrate on timestamptz with DB time in New York: %v, want ErrTimeMode", err)
	}
	if _, err := p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "x", Owner: "o", AtMostFor: time.Second}); !errors.Is(err, shedlock.ErrNotReady) {
		t.Errorf("Acquire of a refused provider: %v, want ErrNotReady", err)
	}
	// Configured columns that contradict the table.
	p, err = shedlock.NewPostgres(pg.Pool, &shedlock.PostgresConfig{TimeMode: shedlock.ClientTimeUTC, Table: "tz_locks", Columns: shedlock.Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Errorf("Migrate with Columns timestamp on a timestamptz table: %v, want ErrTimeMode", err)
	}
	// Bad identifiers.
	for _, cfg := range []shedlock.PostgresConfig{
		{TimeMode: shedlock.DBTime, Table: "shed lock"},
		{TimeMode: shedlock.DBTime, Schema: "a;b"},
	} {
		if _, err := shedlock.NewPostgres(pg.Pool, &cfg); !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("NewPostgres(%+v): %v, want ErrInvalid", cfg, err)
		}
	}
}

// Switching from the ShedLock table to baton's native table keeps tokens
// increasing (ExportTokens), carries live holds over, and rolling back
// keeps them increasing too.
func TestPostgresSwitchToNativeKeepsTokensIncreasing(t *testing.T) {
	t.Parallel()
	p, pg := newPG(t, shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
	ctx := t.Context()
	native, err := postgres.New(pg.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := native.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cycle := func(prov lockprovider.Provider, name string) int64 {
		t.Helper()
		owner := lockprovider.NewOwner()
		l, err := prov.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: time.Minute})
		if err != nil {
			t.Fatalf("Acquire(%q): %v", name, err)
		}
		if err := prov.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}); err != nil {
			t.Fatal(err)
		}
		return l.Token
	}
	// "old" was used natively long ago (a trial run), so its native row has
	// a token below the ShedLock table's.
	oldNative := cycle(native, "old")
	var compat int64
	for range 5 {
		f := cycle(p, "old")
		if f <= compat {
			t.Fatalf("compatible-mode token %d not above %d", f, compat)
		}
		compat = f
	}
	if compat <= oldNative {
		t.Fatalf("compatible-mode token %d not above the earlier native %d", compat, oldNative)
	}
	fresh := cycle(p, "fresh")
	// A live hold in the ShedLock table, by a Java replica.
	java := newJavaPG(t, pg, shedlock.DBTime, nil)
	if _, ok, err := java.lock(ctx, "busy", time.Minute); err != nil || !ok {
		t.Fatalf("java lock: %v %v", ok, err)
	}

	n, err := p.ExportTokens(ctx, "", "")
	if err != nil {
		t.Fatalf("ExportTokens: %v", err)
	}
	if n != 3 {
		t.Errorf("ExportTokens carried %d names, want 3", n)
	}
	if f := cycle(native, "old"); f <= compat {
		t.Errorf("native token %d after the switch, not above the compatible-mode %d", f, compat)
	}
	if f := cycle(native, "fresh"); f <= fresh {
		t.Errorf("native token %d for a name first used natively, not above %d", f, fresh)
	}
	_, err = native.Acquire(ctx, lockprovider.AcquireParams{Name: "busy", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
	if !errors.Is(err, batontype.ErrNotAcquired) {
		t.Errorf("native Acquire of a name a Java replica holds: %v, want ErrNotAcquired (hold carried over)", err)
	}
	// Idempotent.
	if _, err := p.ExportTokens(ctx, "", ""); err != nil {
		t.Fatalf("second ExportTokens: %v", err)
	}
	// Rollback: the ShedLock table's tokens stay above the native ones.
	last := cycle(native, "old")
	if f := cycle(p, "old"); f <= last {
		t.Errorf("compatible-mode token %d after a rollback, not above the native %d", f, last)
	}
}

// A claim for a tick that already ran must not make a concurrent claim for
// the new tick fail (replicas whose clocks differ by about a period).
func TestPostgresStaleTickDoesNotBlockNewTick(t *testing.T) {
	t.Parallel()
	p, _ := newPG(t, shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
	ctx := t.Context()
	// Ticks ahead of the grants: a tick is refused once anyone was granted
	// the name at or after its time.
	old := time.Now().Add(time.Hour).Truncate(time.Second)
	next := old.Add(time.Second)
	acquire := func(name string, tick time.Time) (batontype.Lease, lockprovider.AcquireParams, error) {
		a := lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: tick}
		l, err := p.Acquire(ctx, a)
		return l, a, err
	}
	lost := 0
	for i := range 100 {
		name := fmt.Sprintf("race-%d", i)
		_, first, err := acquire(name, old)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: first.Owner}); err != nil {
			t.Fatal(err)
		}
		var (
			wg               sync.WaitGroup
			start            = make(chan struct{})
			staleErr, newErr error
		)
		wg.Go(func() { <-start; _, _, staleErr = acquire(name, old) })
		wg.Go(func() { <-start; _, _, newErr = acquire(name, next) })
		close(start)
		wg.Wait()
		if !errors.Is(staleErr, batontype.ErrStaleTick) && !errors.Is(staleErr, batontype.ErrNotAcquired) {
			t.Errorf("round %d: stale claim: %v", i, staleErr)
		}
		if newErr != nil {
			lost++
		}
	}
	if lost != 0 {
		t.Errorf("the new tick was refused in %d of 100 rounds; want 0", lost)
	}
}

// The methods outside the lockprovider interfaces, which the conformance
// suites do not reach, refuse a nil context too.
func TestPostgresOwnMethodsNilContext(t *testing.T) {
	t.Parallel()
	p, _ := newPG(t, shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
	var nilCtx context.Context
	if err := p.Migrate(nilCtx); !errors.Is(err, batontype.ErrNilContext) {
		t.Errorf("Migrate(nil): %v; want ErrNilContext", err)
	}
	if err := p.Check(nilCtx); !errors.Is(err, batontype.ErrNilContext) {
		t.Errorf("Check(nil): %v; want ErrNilContext", err)
	}
	if _, err := p.ExportTokens(nilCtx, "", ""); !errors.Is(err, batontype.ErrNilContext) {
		t.Errorf("ExportTokens(nil): %v; want ErrNilContext", err)
	}
}
