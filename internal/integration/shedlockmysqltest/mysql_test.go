package shedlockmysqltest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/shedlockfleet"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// withZone is dsn with the session time zone set to zone; UTC is what the package
// documentation asks of Go replicas on TIMESTAMP columns.
func withZone(dsn, zone string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "time_zone=" + strings.NewReplacer("'", "%27", "+", "%2B", ":", "%3A").Replace("'"+zone+"'")
}

// javaTable is ShedLock's MySQL table as its documentation gives it.
const javaTable = `CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,
    locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL,
    PRIMARY KEY (name))`

// newMy returns a migrated provider in a private database, on a UTC
// session, with the ShedLock table created first by the Java side's DDL
// when javaDDL is set.
func newMy(t testing.TB, cfg shedlock.MySQLConfig, javaDDL bool) (*shedlock.MySQL, *mysqlenv.MY, *sql.DB) {
	t.Helper()
	my := mysqlenv.Database(t)
	if javaDDL {
		if _, err := my.DB.ExecContext(context.Background(), javaTable); err != nil {
			t.Fatal(err)
		}
	}
	db := mysqlenv.Open(t, withZone(my.DSN, "+00:00"))
	p, err := shedlock.NewMySQL(db, &cfg)
	if err != nil {
		t.Fatalf("NewMySQL: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, my, db
}

func modes(t testing.TB) []struct {
	name string
	cfg  shedlock.MySQLConfig
} {
	return []struct {
		name string
		cfg  shedlock.MySQLConfig
	}{
		{"DBTime", shedlock.MySQLConfig{TimeMode: shedlock.DBTime}},
		{"ClientTimeUTC", shedlock.MySQLConfig{TimeMode: shedlock.ClientTimeUTC}},
		{"ClientTimeNewYork", shedlock.MySQLConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: newYork(t)}},
	}
}

func newYork(t testing.TB) *time.Location {
	t.Helper()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	return ny
}

func TestMySQLConformance(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode in a database of its own
			lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
				p, _, _ := newMy(t, m.cfg, false)
				return p
			}, lockprovidertest.WithHistory(history.Config{TickAfterGrant: true}))
		})
	}
	// MySQL's path (no RETURNING: the upsert, then a SELECT) on this
	// MariaDB, which Check takes for MySQL 8.
	t.Run("TwoStatementAcquire", func(t *testing.T) {
		t.Parallel()
		lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
			p, _ := newCounted(t, true)
			return p
		}, lockprovidertest.WithHistory(history.Config{TickAfterGrant: true}))
	})
}

// statements is a shedlock.SQLDB on a real server that counts the
// statements sent and, with mysql8, has the server answer VERSION() as
// MySQL 8.0 would: the statement text is rewritten, the server runs it.
type statements struct {
	shedlock.SQLDB
	mysql8 bool
	n      atomic.Int64
}

func (s *statements) text(q string) string {
	s.n.Add(1)
	if s.mysql8 {
		q = strings.ReplaceAll(q, "VERSION()", "'8.0.40'")
	}
	return q
}

func (s *statements) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.SQLDB.ExecContext(ctx, s.text(q), args...)
}

func (s *statements) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.SQLDB.QueryContext(ctx, s.text(q), args...)
}

func (s *statements) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return s.SQLDB.QueryRowContext(ctx, s.text(q), args...)
}

// newCounted is a migrated DBTime provider in a private database, on a
// statements handle.
func newCounted(t testing.TB, mysql8 bool) (*shedlock.MySQL, *statements) {
	t.Helper()
	my := mysqlenv.Database(t)
	s := &statements{SQLDB: mysqlenv.Open(t, withZone(my.DSN, "+00:00")), mysql8: mysql8}
	p, err := shedlock.NewMySQL(s, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatalf("NewMySQL: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, s
}

// On MariaDB an acquire is one statement whether it grants, finds the name
// held or finds the tick stale; on MySQL (no RETURNING) it is two.
func TestMySQLAcquireStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		mysql8 bool
		want   int64
	}{{"MariaDB", false, 1}, {"MySQL8", true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			p, s := newCounted(t, c.mysql8)
			tick := time.Now().Add(-time.Second).Truncate(time.Millisecond)
			acquire := func(owner string, tick time.Time) error {
				t.Helper()
				before := s.n.Load()
				_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: owner, LockedBy: "test",
					AtMostFor: time.Minute, Tick: tick})
				if got := s.n.Load() - before; got != c.want {
					t.Errorf("Acquire by %s (%v) sent %d statements; want %d", owner, err, got, c.want)
				}
				return err
			}
			if err := acquire("a", tick); err != nil {
				t.Fatalf("first acquire: %v", err)
			}
			if err := acquire("b", time.Time{}); !errors.Is(err, batontype.ErrNotAcquired) {
				t.Errorf("acquire of a held name: %v; want ErrNotAcquired", err)
			}
			if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "job", Owner: "a"}); err != nil {
				t.Fatal(err)
			}
			if err := acquire("b", tick); !errors.Is(err, batontype.ErrStaleTick) {
				t.Errorf("acquire of a tick already run: %v; want ErrStaleTick", err)
			}
			if err := acquire("b", time.Time{}); err != nil {
				t.Errorf("acquire of the released name: %v", err)
			}
		})
	}
}

// javaMy replays ShedLock's JDBC provider on MySQL: with DBTime the
// server-time statements (INSERT IGNORE, then an UPDATE of an expired
// row, times from UTC_TIMESTAMP(3)); with JVM time the generic statements
// with the JVM's times bound as parameters (a plain INSERT, whose
// duplicate key error means "try the UPDATE"), sent as UTC wall-clock
// literals, which is what the JDBC driver sends on a UTC session.
type javaMy struct {
	db       *sql.DB
	dbTime   bool
	lockedBy string
}

func (j *javaMy) lock(ctx context.Context, name string, atMostFor time.Duration) (bool, error) {
	if j.dbTime {
		res, err := j.db.ExecContext(ctx, `INSERT IGNORE INTO shedlock (name, lock_until, locked_at, locked_by)
VALUES (?, TIMESTAMPADD(MICROSECOND, ?, UTC_TIMESTAMP(3)), UTC_TIMESTAMP(3), ?)`, name, atMostFor.Microseconds(), j.lockedBy)
		if err != nil {
			return false, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return true, nil
		}
		res, err = j.db.ExecContext(ctx, `UPDATE shedlock SET lock_until = TIMESTAMPADD(MICROSECOND, ?, UTC_TIMESTAMP(3)),
    locked_at = UTC_TIMESTAMP(3), locked_by = ? WHERE name = ? AND lock_until <= UTC_TIMESTAMP(3)`,
			atMostFor.Microseconds(), j.lockedBy, name)
		if err != nil {
			return false, err
		}
		n, _ := res.RowsAffected()
		return n == 1, nil
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	_, err := j.db.ExecContext(ctx, `INSERT INTO shedlock (name, lock_until, locked_at, locked_by) VALUES (?, ?, ?, ?)`,
		name, lit(now.Add(atMostFor)), lit(now), j.lockedBy)
	if err == nil {
		return true, nil
	}
	if !strings.Contains(err.Error(), "Duplicate entry") {
		return false, err
	}
	res, err := j.db.ExecContext(ctx, `UPDATE shedlock SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <= ?`,
		lit(now.Add(atMostFor)), lit(now), j.lockedBy, name, lit(now))
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func lit(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") }

// unlock is ShedLock's unlock: lock_until becomes the later of now and
// locked_at + lockAtLeastFor.
func (j *javaMy) unlock(ctx context.Context, name string, atLeastFor time.Duration) error {
	if j.dbTime {
		_, err := j.db.ExecContext(ctx, `UPDATE shedlock SET lock_until = IF(TIMESTAMPADD(MICROSECOND, ?, locked_at) > UTC_TIMESTAMP(3),
    TIMESTAMPADD(MICROSECOND, ?, locked_at), UTC_TIMESTAMP(3)) WHERE name = ?`, atLeastFor.Microseconds(), atLeastFor.Microseconds(), name)
		return err
	}
	var lockedAt int64
	if err := j.db.QueryRowContext(ctx, `SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', locked_at) FROM shedlock WHERE name = ?`, name).Scan(&lockedAt); err != nil {
		return err
	}
	until := later(time.UnixMicro(lockedAt).Add(atLeastFor), time.Now().Truncate(time.Millisecond))
	_, err := j.db.ExecContext(ctx, `UPDATE shedlock SET lock_until = ? WHERE name = ?`, lit(until), name)
	return err
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// A Java lock excludes Go replicas and a Go lock excludes Java replicas,
// on the table ShedLock's own DDL created, in both time modes; a Java
// unlock honours lockAtLeastFor for Go replicas, and a Go release does
// for Java replicas.
func TestMySQLJavaAndGoExclude(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode in a database of its own
			p, _, db := newMy(t, m.cfg, true)
			ctx := t.Context()
			java := &javaMy{db: db, dbTime: m.cfg.TimeMode == shedlock.DBTime, lockedBy: "java-host"}
			if ok, err := java.lock(ctx, "job", time.Minute); err != nil || !ok {
				t.Fatalf("Java lock: %v %v", ok, err)
			}
			a := lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}
			if _, err := p.Acquire(ctx, a); !errors.Is(err, batontype.ErrNotAcquired) {
				t.Fatalf("Go Acquire while Java holds: %v; want ErrNotAcquired", err)
			}
			info, err := p.Inspect(ctx, "job")
			if err != nil || !info.Held || info.LockedBy != "java-host" {
				t.Fatalf("Inspect of a Java lock: %+v %v", info, err)
			}
			if err := java.unlock(ctx, "job", 0); err != nil {
				t.Fatal(err)
			}
			a.AtLeastFor = 800 * time.Millisecond
			l, err := p.Acquire(ctx, a)
			if err != nil {
				t.Fatalf("Go Acquire after the Java unlock: %v", err)
			}
			if ok, err := java.lock(ctx, "job", time.Minute); err != nil || ok {
				t.Fatalf("Java lock while Go holds: %v %v; want refused", ok, err)
			}
			if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "job", Owner: a.Owner}); err != nil {
				t.Fatal(err)
			}
			// Released before lockAtLeastFor: still held for everyone.
			if time.Now().Before(l.AtLeastUntil.Add(-200 * time.Millisecond)) {
				if ok, err := java.lock(ctx, "job", time.Minute); err != nil || ok {
					t.Fatalf("Java lock within the Go lease's lockAtLeastFor: %v %v; want refused", ok, err)
				}
			}
			time.Sleep(time.Until(l.AtLeastUntil) + 50*time.Millisecond) // the documented lockAtLeastFor end passes
			if ok, err := java.lock(ctx, "job", time.Minute); err != nil || !ok {
				t.Fatalf("Java lock after the Go lease's lockAtLeastFor: %v %v", ok, err)
			}
			// A Java takeover rewrote locked_by: the old Go owner holds nothing.
			if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "job", Owner: a.Owner}); !errors.Is(err, batontype.ErrNotHeld) {
				t.Fatalf("Release by the Go owner after a Java takeover: %v; want ErrNotHeld", err)
			}
		})
	}
}

// Two Go replicas and a replayed Java replica contend for one name for a
// while: no two holds ever overlap, and both kinds win.
func TestMySQLMixedFleet(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode in a database of its own
			p1, my, db := newMy(t, m.cfg, true)
			p2, err := shedlock.NewMySQL(db, &m.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := p2.Check(t.Context()); err != nil {
				t.Fatal(err)
			}
			_ = my
			java := &javaMy{db: db, dbTime: m.cfg.TimeMode == shedlock.DBTime, lockedBy: "java-host"}
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
			defer cancel()
			var inside, overlaps atomic.Int32
			var wins [3]atomic.Int32
			body := func() {
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				time.Sleep(3 * time.Millisecond) // the work of a run, so holds can overlap if exclusion fails
				inside.Add(-1)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 3)
			for i, p := range []*shedlock.MySQL{p1, p2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						owner := lockprovider.NewOwner()
						_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "shared", Owner: owner, AtMostFor: 10 * time.Second})
						if errors.Is(err, batontype.ErrNotAcquired) || ctx.Err() != nil {
							continue
						}
						if err != nil {
							errs <- err
							return
						}
						wins[i].Add(1)
						body()
						if err := p.Release(context.Background(), lockprovider.ReleaseParams{Name: "shared", Owner: owner}); err != nil {
							errs <- fmt.Errorf("release: %w", err)
							return
						}
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					ok, err := java.lock(ctx, "shared", 10*time.Second)
					if ctx.Err() != nil {
						return
					}
					if err != nil {
						errs <- err
						return
					}
					if !ok {
						continue
					}
					wins[2].Add(1)
					body()
					if err := java.unlock(context.Background(), "shared", 0); err != nil {
						errs <- err
						return
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			t.Logf("wins: go1=%d go2=%d java=%d", wins[0].Load(), wins[1].Load(), wins[2].Load())
			if overlaps.Load() != 0 {
				t.Errorf("%d overlapping holds", overlaps.Load())
			}
			if wins[0].Load()+wins[1].Load() == 0 || wins[2].Load() == 0 {
				t.Errorf("both kinds must win: go=%d java=%d", wins[0].Load()+wins[1].Load(), wins[2].Load())
			}
		})
	}
}

// A Go session whose time_zone is not UTC would read and write the
// TIMESTAMP columns shifted: Migrate refuses it with ErrTimeMode, and a
// caller that ignores the refusal gets it back from every operation until
// a Check passes on a UTC session.
func TestFaultMySQLIgnoredRefusalStaysRefused(t *testing.T) {
	my := mysqlenv.Database(t)
	ctx := t.Context()
	if _, err := my.DB.ExecContext(ctx, javaTable); err != nil {
		t.Fatal(err)
	}
	db := mysqlenv.Open(t, withZone(my.DSN, "+05:45"))
	p, err := shedlock.NewMySQL(db, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Fatalf("Migrate on a +05:45 session: %v; want ErrTimeMode", err)
	}
	owner := lockprovider.NewOwner()
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: owner, AtMostFor: time.Minute})
	if !errors.Is(err, shedlock.ErrNotReady) || !errors.Is(err, shedlock.ErrTimeMode) {
		t.Fatalf("Acquire after the refusal: %v; want ErrNotReady and ErrTimeMode", err)
	}
	if _, err := p.List(ctx); !errors.Is(err, shedlock.ErrNotReady) {
		t.Fatalf("List after the refusal: %v; want ErrNotReady", err)
	}
	if err := p.Check(ctx); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Fatalf("Check again: %v; want ErrTimeMode", err)
	}
	// The same provider type on a UTC session is accepted.
	good, err := shedlock.NewMySQL(mysqlenv.Open(t, withZone(my.DSN, "+00:00")), &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := good.Check(ctx); err != nil {
		t.Fatalf("Check on a UTC session: %v", err)
	}
}

// Other refusals: ClientTimeZone on DATETIME columns outside UTC, a
// TIMESTAMP column that the server updates by itself, a missing column,
// a name longer than the name column.
func TestMySQLRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ddl string
		cfg       shedlock.MySQLConfig
		want      error
	}{
		{"ClientTimeZoneDatetime", `CREATE TABLE shedlock (name VARCHAR(64) PRIMARY KEY, lock_until DATETIME(3) NOT NULL,
    locked_at DATETIME(3) NOT NULL, locked_by VARCHAR(255) NOT NULL)`,
			shedlock.MySQLConfig{TimeMode: shedlock.ClientTimeZone, JavaZone: ny}, shedlock.ErrTimeMode},
		{"OnUpdate", `CREATE TABLE shedlock (name VARCHAR(64) PRIMARY KEY,
    lock_until TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL)`,
			shedlock.MySQLConfig{TimeMode: shedlock.DBTime}, shedlock.ErrNotReady},
		{"WrongType", `CREATE TABLE shedlock (name VARCHAR(64) PRIMARY KEY, lock_until BIGINT NOT NULL,
    locked_at BIGINT NOT NULL, locked_by VARCHAR(255) NOT NULL)`,
			shedlock.MySQLConfig{TimeMode: shedlock.DBTime}, shedlock.ErrNotReady},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			my := mysqlenv.Database(t)
			if _, err := my.DB.ExecContext(ctx, c.ddl); err != nil {
				t.Fatal(err)
			}
			p, err := shedlock.NewMySQL(mysqlenv.Open(t, withZone(my.DSN, "+00:00")), &c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Migrate(ctx); err == nil {
				t.Fatal("Migrate passed; want a refusal")
			}
			_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
			if !errors.Is(err, c.want) || !errors.Is(err, shedlock.ErrNotReady) {
				t.Fatalf("Acquire after the refusal: %v; want %v", err, c.want)
			}
		})
	}
	t.Run("LongName", func(t *testing.T) {
		p, _, _ := newMy(t, shedlock.MySQLConfig{TimeMode: shedlock.DBTime}, true)
		_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: strings.Repeat("n", 65), Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
		if !errors.Is(err, batontype.ErrInvalid) {
			t.Fatalf("Acquire of a 65-character name on VARCHAR(64): %v; want ErrInvalid", err)
		}
	})
}

// With DBTime the Java sessions write UTC_TIMESTAMP(3) into TIMESTAMP
// columns through the server's default time zone: off UTC, the stored
// instants are shifted (and jump at DST changes), so Check refuses DBTime
// there, while JVM time (instants) is accepted on the same server.
func TestMySQLDBTimeNeedsUTCServer(t *testing.T) {
	t.Parallel()
	s := testenv.StartMySQL(t)
	ctx := t.Context()
	admin := mysqlenv.Open(t, s.DSN())
	for _, q := range []string{"SET GLOBAL time_zone = '+01:00'", "CREATE DATABASE d", "CREATE TABLE d." + strings.TrimPrefix(javaTable, "CREATE TABLE ")} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db := mysqlenv.Open(t, withZone(mysqlenv.WithDatabase(t, s.DSN(), "d"), "+00:00"))
	p, err := shedlock.NewMySQL(db, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); !errors.Is(err, shedlock.ErrTimeMode) {
		t.Fatalf("DBTime on a +01:00 server: %v; want ErrTimeMode", err)
	}
	q, err := shedlock.NewMySQL(db, &shedlock.MySQLConfig{TimeMode: shedlock.ClientTimeUTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Check(ctx); err != nil {
		t.Fatalf("ClientTimeUTC on a +01:00 server: %v", err)
	}
}

// A tick is refused when anyone, a Java replica included, was granted the
// lock at or after the tick's time: that Java run served the tick.
func TestMySQLJavaGrantServesTick(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode in a database of its own
			p, _, db := newMy(t, m.cfg, true)
			ctx := t.Context()
			java := &javaMy{db: db, dbTime: m.cfg.TimeMode == shedlock.DBTime, lockedBy: "java-host"}
			tick := time.Now().Add(-time.Second).Truncate(time.Second)
			if ok, err := java.lock(ctx, "job", time.Minute); err != nil || !ok {
				t.Fatalf("Java lock: %v %v", ok, err)
			}
			if err := java.unlock(ctx, "job", 0); err != nil {
				t.Fatal(err)
			}
			a := lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: tick}
			if _, err := p.Acquire(ctx, a); !errors.Is(err, batontype.ErrStaleTick) {
				t.Fatalf("Go claim of a tick a Java replica ran: %v; want ErrStaleTick", err)
			}
			a.Tick = time.Now().Add(time.Second)
			time.Sleep(time.Until(a.Tick) + 10*time.Millisecond) // the tick is due
			l, err := p.Acquire(ctx, a)
			if err != nil || !l.Tick.Equal(a.Tick.UTC().Truncate(time.Microsecond)) {
				t.Fatalf("Go claim of the next tick: %+v %v", l, err)
			}
		})
	}
}

// Two baton scheduler replicas and a replayed ShedLock replica share one
// job on ShedLock's MySQL table, in every time mode: no tick runs twice,
// no two runs overlap, and both kinds win ticks.
func TestMySQLInterleavedWithJava(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each mode in a database of its own
			p1, _, db := newMy(t, m.cfg, true)
			p2, err := shedlock.NewMySQL(db, &m.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := p2.Check(t.Context()); err != nil {
				t.Fatal(err)
			}
			java := &javaMy{db: db, dbTime: m.cfg.TimeMode == shedlock.DBTime, lockedBy: "java-host"}
			lock := func(ctx context.Context, name string, atMostFor time.Duration) (time.Time, bool, error) {
				createdAt := time.Now()
				ok, err := java.lock(ctx, name, atMostFor)
				return createdAt, ok, err
			}
			// unlock reads locked_at from the row, which is what
			// ShedLock's createdAt became.
			unlock := func(ctx context.Context, name string, _ time.Time, atLeastFor time.Duration) error {
				return java.unlock(ctx, name, atLeastFor)
			}
			shedlockfleet.Interleave(t, "report", lock, unlock, [2]lockprovider.Provider{p1, p2})
		})
	}
}

// On ShedLock's MySQL table too, a connection gone silent under an Acquire
// is an error of unknown outcome (ErrUnavailable, NotSent false), never
// ErrNotAcquired; after the heal the same owner's retry gets one grant,
// and a closed handle is ErrUnavailable with NotSent.
func TestFaultMySQLShedLockBlackhole(t *testing.T) {
	p0, my, _ := newMy(t, shedlock.MySQLConfig{TimeMode: shedlock.DBTime}, true)
	cfg, err := gomysql.ParseDSN(withZone(my.DSN, "+00:00"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	db := mysqlenv.Open(t, cfg.FormatDSN())
	p, err := shedlock.NewMySQL(db, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	a := lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}
	proxy.SetMode(testenv.Blackhole)
	callCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = p.Acquire(callCtx, a)
	cancel()
	var ue *batontype.UnavailableError
	if err == nil || errors.Is(err, batontype.ErrNotAcquired) || !errors.As(err, &ue) || ue.NotSent {
		t.Fatalf("Acquire through a silent connection: %v; want ErrUnavailable of unknown outcome", err)
	}
	proxy.SetMode(testenv.Pass)
	var first batontype.Lease
	deadline := time.Now().Add(10 * time.Second)
	for {
		if first, err = p.Acquire(ctx, a); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // retry interval of a deadline-bounded wait
	}
	if err != nil {
		t.Fatalf("the same owner's retry: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // late copies of the silent attempt have had time to land
	again, err := p.Acquire(ctx, a)
	if err != nil || again.Token != first.Token {
		t.Fatalf("second retry: token %d (%v); want %d", again.Token, err, first.Token)
	}
	if _, err := p0.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("another owner: %v; want ErrNotAcquired", err)
	}
	_ = db.Close()
	_, err = p.Acquire(ctx, a)
	if !errors.As(err, &ue) || !ue.NotSent {
		t.Fatalf("Acquire on a closed handle: %v; want ErrUnavailable with NotSent", err)
	}
}

// One acquire and one release of a free name, sequentially, on MariaDB's
// one-statement acquire and on MySQL's two-statement path (VERSION()
// rewritten, same server).
func BenchmarkMySQLLockCycle(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		mysql8 bool
	}{{"Returning", false}, {"TwoStatement", true}} {
		b.Run(c.name, func(b *testing.B) {
			p, _ := newCounted(b, c.mysql8)
			a := lockprovider.AcquireParams{Name: "bench", Owner: "o", LockedBy: "bench", AtMostFor: time.Minute}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Acquire(ctx, a); err != nil {
					b.Fatal(err)
				}
				if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "bench", Owner: "o"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
