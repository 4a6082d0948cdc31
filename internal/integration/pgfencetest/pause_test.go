package pgfencetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
)

// The pause test (Kleppmann's scenario): worker A, a child process,
// acquires with a 1 s TTL and is stopped (SIGSTOP) for 2.5 s. Meanwhile B
// (this process) acquires the lock once A's lease expired and writes through
// the guard. A is resumed and writes at once with its old token. The guard
// must refuse A's write, the row must hold B's write, and A's Context must
// report the loss. With the guard bypassed (a plain UPDATE), A's stale write
// lands: proof that the test can fail.
//
// In the "checked" mode A writes at once with its lock's Context, so the
// guard's check of the trust window is A's first check after the resume: it
// must refuse the write with ErrLockLost before sending it, although the
// window's timer has often not run yet (A's Context().Err() just before the
// write is logged). In the "guarded" mode A first calls Lock.Check, which
// must report the loss, then writes with a context that carries no lock, so
// that the database itself refuses the write with ErrStaleToken.
func TestPause(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"redis", "postgres"} {
		for _, mode := range []string{"checked", "guarded", "bypassed"} {
			t.Run(backend+"-tokens/"+mode, func(t *testing.T) {
				t.Parallel()
				testPause(t, backend, mode)
			})
		}
	}
}

// TestFaultMySQLPause is the pause test with the lease on MySQL (the
// provider's fencing tokens) and the fenced row in PostgreSQL.
func TestFaultMySQLPause(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"checked", "guarded", "bypassed"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testPause(t, "mysql", mode)
		})
	}
}

func testPause(t *testing.T, backendName, mode string) {
	bypass := mode == "bypassed"
	const ttl = time.Second
	ctx := context.Background()
	pg := pgenv.Schema(t)
	spec := helperSpec{Role: "pause", Backend: backendName, Prefix: testenv.Prefix(t), RedisURL: testenv.RedisURL(t), PGURL: pg.URL,
		Lock: "doc:1", AtMostFor: ttl, Bypass: bypass, LockCtx: mode == "checked"}
	if backendName == "mysql" {
		spec.MyDSN = mysqlenv.Database(t).DSN
	}
	b := openBackend(t, spec)
	migrate(t, b)
	if _, err := b.pool.Exec(ctx, `CREATE TABLE doc (id int PRIMARY KEY, body text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := pgfence.AddColumn(ctx, b.pool, "doc"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO doc VALUES (1, 'initial')`); err != nil {
		t.Fatal(err)
	}
	guard, err := pgfence.NewGuard("doc", "id", nil)
	if err != nil {
		t.Fatal(err)
	}

	a := startChild(t, spec)
	tokA, err := strconv.ParseInt(a.expect("acquired", 60*time.Second), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	a.signal(syscall.SIGSTOP)
	stoppedAt := time.Now()

	// B waits for A's lease to expire, then writes.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lockB, err := newLocker(t, b.provider).Acquire(wctx, spec.Lock, &baton.AcquireOptions{AtMostFor: 30 * time.Second})
	if err != nil {
		t.Fatalf("B acquire: %v", err)
	}
	defer lockB.Release(ctx)
	tokB := lockB.Token()
	if tokB <= tokA {
		t.Fatalf("B's token %d is not above A's %d", tokB, tokA)
	}
	if err := guard.Update(ctx, b.pool, tokB, 1, map[string]any{"body": "written by B"}); err != nil {
		t.Fatalf("B's guarded write: %v", err)
	}
	grantedB := time.Since(stoppedAt)

	// Hold the pause past the lease.
	time.Sleep(2500*time.Millisecond - time.Since(stoppedAt))
	a.send("go") // buffered in the pipe until A runs again
	a.signal(syscall.SIGCONT)
	before := a.expect("ctx before check", 30*time.Second)
	check := a.expect("check", 30*time.Second)
	wrote := a.expect("wrote", 30*time.Second)
	ctxState := a.expect("ctx", 30*time.Second)
	t.Logf("A token %d stopped 2.5s; B token %d granted %v after the stop; A's Context before its first check: %s; check: %s; A's write: %s; A's Context: %s",
		tokA, tokB, grantedB.Round(time.Millisecond), before, check, wrote, ctxState)
	if mode != "checked" && !strings.HasPrefix(check, "lost") {
		t.Errorf("A's first Check after the pause: %s, want ErrLockLost", check)
	}

	var body string
	var last int64
	if err := b.pool.QueryRow(ctx, `SELECT body, last_fence FROM doc WHERE id = 1`).Scan(&body, &last); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ctxState, "lost") {
		t.Errorf("A's Context: %s, want done with cause ErrLockLost", ctxState)
	}
	if bypass {
		// The canary: without the guard the stale write lands.
		if wrote != "ok" || body != "written by A" {
			t.Errorf("bypassed guard: A's write %q, row %q; expected the stale write to land", wrote, body)
		}
		return
	}
	if want := map[string]string{"checked": "lost", "guarded": "stale"}[mode]; wrote != want {
		t.Errorf("A's write with token %d: %s, want %s", tokA, wrote, want)
	}
	if body != "written by B" || last != tokB {
		t.Errorf("row holds %q with fence %d; want B's write with fence %d", body, last, tokB)
	}
}

// pauseWorker is worker A.
func pauseWorker(t *testing.T, spec helperSpec, report func(string, ...any)) {
	ctx := context.Background()
	b := openBackend(t, spec)
	guard, err := pgfence.NewGuard("doc", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	in := stdinLines()
	lock, err := newLocker(t, b.provider).TryAcquire(ctx, spec.Lock, &baton.AcquireOptions{AtMostFor: spec.AtMostFor})
	if err != nil {
		t.Fatal(err)
	}
	report("acquired %d", lock.Token())
	if cmd := <-in; cmd != "go" {
		t.Fatalf("command %q", cmd)
	}
	// Check, then write at once, as a process that does not know it was
	// paused.
	report("ctx before check %v", lock.Context().Err())
	wctx := ctx
	if spec.LockCtx {
		wctx = lock.Context() // the guard checks the lock first
		report("check left to the guard")
	} else if err := lock.Check(); errors.Is(err, baton.ErrLockLost) {
		report("check lost (%v)", err)
	} else {
		report("check %v", err)
	}
	if spec.Bypass {
		_, err = b.pool.Exec(ctx, `UPDATE doc SET body = 'written by A' WHERE id = 1`)
	} else {
		err = guard.Update(wctx, b.pool, lock.Token(), 1, map[string]any{"body": "written by A"})
	}
	switch {
	case err == nil:
		report("wrote ok")
	case errors.Is(err, baton.ErrLockLost):
		report("wrote lost")
	case errors.Is(err, fence.ErrStaleToken):
		report("wrote stale")
	default:
		report("wrote error %v", err)
	}
	select {
	case <-lock.Context().Done():
	case <-time.After(5 * time.Second):
	}
	cause := context.Cause(lock.Context())
	switch {
	case errors.Is(cause, baton.ErrLockLost):
		report("ctx lost (%v)", cause)
	default:
		report("ctx %s", fmt.Sprint(cause))
	}
	_ = lock.Release(ctx)
	for range in { // until the parent closes stdin
	}
}
