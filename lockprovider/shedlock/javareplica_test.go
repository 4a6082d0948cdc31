package shedlock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// The statements below are the ones ShedLock 7.9.0 (tag
// shedlock-parent-7.9.0 of github.com/lukas-krecan/ShedLock; unchanged at
// commit 2495b14) issues on PostgreSQL, with its named parameters written
// as $n (a name used twice is one $n, as JDBC binds the same value). They
// are replayed by javaPG, a stand-in for a Java replica, so the tests show
// Go and Java replicas excluding each other on the statements the Java
// fleet really runs.
const (
	// PostgresSqlServerTimeStatementsSource (usingDbTime()):
	// getInsertStatement. $1 name, $2 lockAtMostForInterval (seconds),
	// $3 lockedBy.
	javaDBTimeInsert = `INSERT INTO shedlock(name, lock_until, locked_at, locked_by) VALUES($1, timezone('utc', CURRENT_TIMESTAMP) + make_interval(secs => $2), timezone('utc', CURRENT_TIMESTAMP), $3) ON CONFLICT (name) DO UPDATE SET lock_until = timezone('utc', CURRENT_TIMESTAMP) + make_interval(secs => $2), locked_at = timezone('utc', CURRENT_TIMESTAMP), locked_by = $3 WHERE shedlock.name = $1 AND shedlock.lock_until <= timezone('utc', CURRENT_TIMESTAMP)`
	// ShedLock 7.9.0, PostgresSqlServerTimeStatementsSource.getUpdateStatement.
	javaDBTimeUpdate = `UPDATE shedlock SET lock_until = timezone('utc', CURRENT_TIMESTAMP) + make_interval(secs => $2), locked_at = timezone('utc', CURRENT_TIMESTAMP), locked_by = $3 WHERE shedlock.name = $1 AND shedlock.lock_until <= timezone('utc', CURRENT_TIMESTAMP)`
	// ShedLock 7.9.0, PostgresSqlServerTimeStatementsSource.getUnlockStatement.
	// $1 name, $2 lockAtLeastForInterval (seconds), $3 lockedBy.
	javaDBTimeUnlock = `UPDATE shedlock SET lock_until = CASE WHEN locked_at + make_interval(secs => $2) > timezone('utc', CURRENT_TIMESTAMP) THEN locked_at + make_interval(secs => $2) ELSE timezone('utc', CURRENT_TIMESTAMP) END WHERE name = $1 AND locked_by = $3`

	// ShedLock 7.9.0, PostgresSqlStatementsSource.getInsertStatement (JVM
	// time). $1 name, $2 lockUntil, $3 now, $4 lockedBy.
	javaClientInsert = `INSERT INTO shedlock(name, lock_until, locked_at, locked_by) VALUES($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET lock_until = $2, locked_at = $3, locked_by = $4 WHERE shedlock.lock_until <= $3`
	// ShedLock 7.9.0, SqlStatementsSource.getUpdateStatement.
	javaClientUpdate = `UPDATE shedlock SET lock_until = $2, locked_at = $3, locked_by = $4 WHERE name = $1 AND lock_until <= $3`
	// ShedLock 7.9.0, SqlStatementsSource.getUnlockStatement. $1 name,
	// $2 unlockTime, $3 lockedBy.
	javaClientUnlock = `UPDATE shedlock SET lock_until = $2 WHERE name = $1 AND locked_by = $3`
)

// javaPG replays ShedLock's JDBC provider (StorageBasedLockProvider over
// JdbcTemplateStorageAccessor): the first attempt per name is the INSERT
// (an upsert on PostgreSQL), later ones the UPDATE, each in its own
// autocommit transaction, on a connection whose session time zone is the
// JVM's (pgjdbc sends it at connect).
type javaPG struct {
	db       *pgxpool.Pool
	mode     shedlock.TimeMode
	zone     *time.Location // JVM default zone
	lockedBy string
	inserted map[string]bool // ShedLock's LockRecordRegistry
	now      func() time.Time
	// lockedAt is the locked_at the last client-time lock bound: ShedLock
	// reads the clock again for it, so it can be a millisecond past
	// createdAt.
	lockedAt time.Time
}

func newJavaPG(t testing.TB, pg *pgenv.PG, mode shedlock.TimeMode, zone *time.Location) *javaPG {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	if zone == nil {
		zone = time.UTC
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = zone.String()
	db, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return &javaPG{db: db, mode: mode, zone: zone, lockedBy: "java-host", inserted: map[string]bool{}, now: time.Now}
}

// clock is ShedLock's ClockProvider.now(): truncated to milliseconds.
func (j *javaPG) clock() time.Time { return j.now().Truncate(time.Millisecond) }

// ts is how JdbcTemplate binds a ZonedDateTime (through a Calendar):
// pgjdbc sends the wall time of the calendar's zone with its offset, as an
// untyped literal, so a timestamp column keeps the wall time and a
// timestamptz column the instant. forceUtcTimeZone() makes that zone UTC.
func (j *javaPG) ts(t time.Time) string {
	z := j.zone
	if j.mode == shedlock.ClientTimeUTC {
		z = time.UTC
	}
	return t.In(z).Format("2006-01-02 15:04:05.000-07:00")
}

func secs(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// lock is ShedLock's lock(): it returns the lock configuration's createdAt
// when acquired.
func (j *javaPG) lock(ctx context.Context, name string, atMostFor time.Duration) (time.Time, bool, error) {
	createdAt := j.clock()
	exec := func(insert bool) (bool, error) {
		var sql string
		var args []any
		switch {
		case j.mode == shedlock.DBTime && insert:
			sql, args = javaDBTimeInsert, []any{name, secs(atMostFor), j.lockedBy}
		case j.mode == shedlock.DBTime:
			sql, args = javaDBTimeUpdate, []any{name, secs(atMostFor), j.lockedBy}
		case insert:
			j.lockedAt = j.clock()
			sql, args = javaClientInsert, []any{name, j.ts(createdAt.Add(atMostFor)), j.ts(j.lockedAt), j.lockedBy}
		default:
			j.lockedAt = j.clock()
			sql, args = javaClientUpdate, []any{name, j.ts(createdAt.Add(atMostFor)), j.ts(j.lockedAt), j.lockedBy}
		}
		tag, err := j.db.Exec(ctx, sql, args...)
		if err != nil {
			return false, err
		}
		return tag.RowsAffected() > 0, nil
	}
	if !j.inserted[name] {
		ok, err := exec(true)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("java insert: %w", err)
		}
		j.inserted[name] = true
		if ok {
			return createdAt, true, nil
		}
	}
	ok, err := exec(false)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("java update: %w", err)
	}
	return createdAt, ok, nil
}

// unlock is ShedLock's unlock() of a lock created at createdAt.
func (j *javaPG) unlock(ctx context.Context, name string, createdAt time.Time, atLeastFor time.Duration) error {
	var err error
	if j.mode == shedlock.DBTime {
		_, err = j.db.Exec(ctx, javaDBTimeUnlock, name, secs(atLeastFor), j.lockedBy)
	} else {
		// LockConfiguration.getUnlockTime: max(now, createdAt + lockAtLeastFor).
		unlockAt := j.clock()
		if least := createdAt.Add(atLeastFor); least.After(unlockAt) {
			unlockAt = least
		}
		_, err = j.db.Exec(ctx, javaClientUnlock, name, j.ts(unlockAt), j.lockedBy)
	}
	return err
}
