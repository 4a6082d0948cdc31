package shedlockmysqltest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// An Extend that waits behind the owner's own Release (an earlier call
// whose reply was lost, say) must find the lease ended, though it ended
// after the Extend's statement began, and not revive it. The Release runs
// in a transaction that locked the row before the Extend was sent; it
// commits only once InnoDB shows the Extend blocked by it.
func TestExtendBehindReleaseFindsItEnded(t *testing.T) {
	cfg := shedlock.MySQLConfig{TimeMode: shedlock.DBTime}
	p, _, db := newMy(t, cfg, false)
	ctx := t.Context()
	a := lockprovider.AcquireParams{Name: "raced", Owner: lockprovider.NewOwner(), AtMostFor: 10 * time.Second}
	if _, err := p.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var conn int64
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM shedlock WHERE name = ? FOR UPDATE", a.Name); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&conn); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: 10 * time.Second})
		done <- err
	}()
	mysqlenv.Blocked(t, ctx, db, conn, done)
	inTx, err := shedlock.NewMySQL(tx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := inTx.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inTx.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, batontype.ErrNotHeld) {
		t.Fatalf("Extend behind the release: %v, want ErrNotHeld", err)
	}
	info, err := p.Inspect(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Held {
		t.Errorf("after the release and the Extend: held until %v", info.Until)
	}
}

// afterExec runs then, once, after the first statement containing match
// whose changed-row count satisfies changed, before the provider's next
// statement (its read-back).
type afterExec struct {
	shedlock.SQLDB
	match   string
	changed func(n int64) bool
	then    func()
	once    sync.Once
}

func (x *afterExec) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := x.SQLDB.ExecContext(ctx, query, args...)
	if err != nil || !strings.Contains(query, x.match) {
		return res, err
	}
	if n, _ := res.RowsAffected(); x.changed(n) {
		x.once.Do(x.then)
	}
	return res, err
}

// An Extend to a short lease takes effect, the lease ends, and another
// owner is granted the name, all before the Extend reads the row back: the
// Extend must not answer ErrNotHeld (which says it changed nothing: the
// extension did end the lease early), but an error of unknown outcome. A
// load test's history check found the definite refusal.
func TestExtendThenLostBeforeReadBack(t *testing.T) {
	cfg := shedlock.MySQLConfig{TimeMode: shedlock.DBTime}
	other, _, db := newMy(t, cfg, false)
	ctx := t.Context()
	a := lockprovider.AcquireParams{Name: "raced", Owner: lockprovider.NewOwner(), AtMostFor: 10 * time.Second}
	if _, err := other.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := lockprovider.AcquireParams{Name: a.Name, Owner: lockprovider.NewOwner(), AtMostFor: 10 * time.Second}
	// After the Extend's UPDATE changed the row, before its read-back.
	racer := &afterExec{SQLDB: db, match: "at_least_until = TIMESTAMPADD", changed: func(n int64) bool { return n > 0 }, then: func() {
		// The extension's 50ms lease must end before b is granted:
		// the backend's clock decides, so poll it.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			_, err := other.Acquire(ctx, b)
			if err == nil {
				return
			}
			if !errors.Is(err, batontype.ErrNotAcquired) || time.Now().After(deadline) {
				t.Errorf("second owner's acquire: %v", err)
				return
			}
		}
	}}
	p, err := shedlock.NewMySQL(racer, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: 50 * time.Millisecond})
	if err == nil || batontype.Definite(err) {
		t.Fatalf("Extend whose lease went to another owner before the read-back: %v, want an error of unknown outcome", err)
	}
	t.Logf("Extend: %v", err)
	info, err := p.Inspect(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if info.LockedBy == "" || !info.Held {
		t.Errorf("after the race: %+v, want the second owner's lease", info)
	}
}

// On MySQL (no RETURNING) an acquire is an upsert and a read-back. A claim
// with a tick, refused because the lease was in force at the upsert, must
// answer ErrNotAcquired even when the lease ended before the read-back: a
// make test-load history had it answer ErrStaleTick for a tick newer than
// anything the row held.
func TestTwoStatementRefusalBehindEndingLease(t *testing.T) {
	ctx := t.Context()
	holder, s := newCounted(t, true)
	a := lockprovider.AcquireParams{Name: "report", Owner: lockprovider.NewOwner(), AtMostFor: 10 * time.Second, AtLeastFor: 300 * time.Millisecond}
	l, err := holder.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		t.Fatal(err) // the lease stays until its minimum hold ends
	}
	// After an acquire's upsert changed nothing, before its read-back.
	hold := &afterExec{SQLDB: s, match: "ON DUPLICATE KEY UPDATE", changed: func(n int64) bool { return n == 0 }, then: func() {
		// Until the minimum hold has ended on the backend's clock.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			info, err := holder.Inspect(ctx, a.Name)
			if err != nil || !info.Held || time.Now().After(deadline) {
				return
			}
		}
	}}
	p, err := shedlock.NewMySQL(hold, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	tick := l.GrantedAt.Add(time.Millisecond) // newer than the grant and any tick
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: a.Name, Owner: lockprovider.NewOwner(), AtMostFor: time.Second, Tick: tick})
	if !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("acquire refused by a lease that ended before the read-back: %v, want ErrNotAcquired", err)
	}
}
