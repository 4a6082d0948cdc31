package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// Replicas whose clocks differ by about a period claim different ticks at
// the same moment: one claims the tick that already ran (stale), another
// the new one. The stale claim must not make the new one fail (with the
// lock wait cut to nothing, a row lock taken by the stale claim would):
// the name is free and the new tick was never granted, so it must be
// granted every time.
func TestFaultStaleTickRace(t *testing.T) {
	t.Parallel()
	const rounds = 300
	p, _ := newProvider(t, nil)
	ctx := t.Context()
	old := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	next := old.Add(time.Second)
	var lost int
	reasons := map[string]int{}
	for i := range rounds {
		name := fmt.Sprintf("race-%d", i)
		first := params(name, time.Minute)
		first.Tick = old
		if _, err := p.Acquire(ctx, first); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: first.Owner}); err != nil {
			t.Fatal(err)
		}
		stale, fresh := params(name, time.Minute), params(name, time.Minute)
		stale.Tick, fresh.Tick = old, next
		var (
			wg               sync.WaitGroup
			start            = make(chan struct{})
			staleErr, newErr error
			newLease         batontype.Lease
		)
		wg.Add(2)
		go func() { defer wg.Done(); <-start; _, staleErr = p.Acquire(ctx, stale) }()
		go func() { defer wg.Done(); <-start; newLease, newErr = p.Acquire(ctx, fresh) }()
		close(start)
		wg.Wait()
		if !errors.Is(staleErr, batontype.ErrStaleTick) && !errors.Is(staleErr, batontype.ErrNotAcquired) {
			t.Errorf("round %d: stale claim: %v; want ErrStaleTick or ErrNotAcquired", i, staleErr)
		}
		if newErr != nil {
			lost++
			reasons[newErr.Error()]++
			continue
		}
		if !newLease.Tick.Equal(next) {
			t.Errorf("round %d: granted tick %v; want %v", i, newLease.Tick, next)
		}
	}
	t.Logf("%d rounds: the new tick was refused in %d (%v)", rounds, lost, reasons)
	if lost != 0 {
		t.Errorf("the new tick was lost in %d of %d rounds; want 0", lost, rounds)
	}
}

// A server that was killed answers with errors matching ErrUnavailable,
// never ErrNotAcquired; once restarted, leases committed before the crash
// are still held and tokens keep increasing.
func TestFaultServerRestart(t *testing.T) {
	t.Parallel()
	s := testenv.StartMySQL(t)
	ctx := t.Context()
	admin := mysqlenv.Open(t, s.DSN())
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	db := mysqlenv.Open(t, mysqlenv.WithDatabase(t, s.DSN(), "d"))
	p, err := mysql.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	held := params("held", time.Hour)
	first, err := p.Acquire(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	s.Kill()
	_, err = p.Acquire(ctx, params("other", time.Minute))
	if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire on a killed server: %v; want ErrUnavailable", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	// The handle's old connections died with the server: database/sql
	// retries on a fresh one.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = p.Acquire(ctx, params("held", time.Minute))
		if err == nil || errors.Is(err, batontype.ErrNotAcquired) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire of a lease held before the crash: %v; want ErrNotAcquired", err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: held.Name, Owner: held.Owner}); err != nil {
		t.Fatalf("Release by the holder after the restart: %v", err)
	}
	next, err := p.Acquire(ctx, params("held", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if next.Token <= first.Token {
		t.Errorf("token after restart %d, want above %d", next.Token, first.Token)
	}
}

// A reply lost on the way (the grant took effect, its answer never came)
// is an error of unknown outcome, never ErrNotAcquired; a retry of the
// same Acquire with the same owner, once the network is back, returns the
// grant the lost reply carried. Connections reset under a call give
// ErrUnavailable too, and the handle recovers on fresh connections.
func TestFaultLostReplyAndReset(t *testing.T) {
	t.Parallel()
	my := mysqlenv.Database(t)
	p0, err := mysql.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p0.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	db := mysqlenv.Open(t, cfg.FormatDSN())
	p, err := mysql.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	a := params("lost-reply", time.Minute)
	proxy.SetMode(testenv.DropReplies)
	callCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = p.Acquire(callCtx, a)
	cancel()
	if err == nil || errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("Acquire whose reply was dropped: %v; want an error of unknown outcome", err)
	}
	if !errors.Is(err, batontype.ErrUnavailable) {
		t.Errorf("Acquire whose reply was dropped: %v; want it to match ErrUnavailable", err)
	}
	proxy.SetMode(testenv.Pass)
	var l batontype.Lease
	deadline := time.Now().Add(10 * time.Second)
	for {
		if l, err = p.Acquire(ctx, a); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("retried Acquire by the same owner: %v", err)
	}
	info, err := p0.Inspect(ctx, a.Name)
	if err != nil || info.Token != l.Token || !info.Held {
		t.Fatalf("Inspect after the retry: %+v (%v); want the retried grant, token %d", info, err, l.Token)
	}

	proxy.SetMode(testenv.Reset)
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); !errors.Is(err, batontype.ErrUnavailable) {
		t.Errorf("Release through reset connections: %v; want ErrUnavailable", err)
	}
	proxy.SetMode(testenv.Pass)
	deadline = time.Now().Add(10 * time.Second)
	for {
		if err = p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Release once the connections are back: %v", err)
	}
}

// A connection that goes silent under an Acquire (a network partition: the
// request is held, no answer comes) ends with the caller's deadline as an
// error of unknown outcome: ErrUnavailable, not NotSent, never
// ErrNotAcquired. Once the network heals the held request may still reach
// the server; retries by the same owner are consistent with it, whatever
// the order: each returns the same grant, and another owner is refused.
// An Extend cut the same way is of unknown outcome too, and the lease it
// may have extended is still the same owner's.
func TestFaultBlackholeMidStatement(t *testing.T) {
	t.Parallel()
	my := mysqlenv.Database(t)
	p0, err := mysql.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p0.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	p, err := mysql.New(mysqlenv.Open(t, cfg.FormatDSN()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	const callTimeout = 500 * time.Millisecond
	unknown := func(op string, err error) {
		t.Helper()
		var ue *batontype.UnavailableError
		switch {
		case err == nil, errors.Is(err, batontype.ErrNotAcquired), errors.Is(err, batontype.ErrNotHeld):
			t.Fatalf("%s through a silent connection: %v; want an error of unknown outcome", op, err)
		case !errors.As(err, &ue) || ue.NotSent:
			t.Errorf("%s through a silent connection: %v; want an UnavailableError with NotSent false", op, err)
		}
	}

	a := params("blackholed", time.Minute)
	proxy.SetMode(testenv.Blackhole)
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	start := time.Now()
	_, err = p.Acquire(callCtx, a)
	took := time.Since(start)
	cancel()
	unknown("Acquire", err)
	t.Logf("Acquire through a blackhole: %v after %v", err, took.Round(time.Millisecond))
	proxy.SetMode(testenv.Pass)

	var first batontype.Lease
	healed := time.Now()
	deadline := healed.Add(10 * time.Second)
	tries := 0
	for {
		tries++
		if first, err = p.Acquire(ctx, a); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("retried Acquire by the same owner: %v", err)
	}
	t.Logf("the same owner's retry succeeded after %d tries, %v after the network healed", tries, time.Since(healed).Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond) // room for a held request to land late
	again, err := p.Acquire(ctx, a)
	if err != nil || again.Token != first.Token {
		t.Fatalf("second retry: token %d (%v); want the same grant, token %d", again.Token, err, first.Token)
	}
	if _, err := p0.Acquire(ctx, params("blackholed", time.Minute)); !errors.Is(err, batontype.ErrNotAcquired) {
		t.Fatalf("another owner: %v; want ErrNotAcquired", err)
	}
	info, err := p0.Inspect(ctx, a.Name)
	if err != nil || !info.Held || info.Token != first.Token {
		t.Fatalf("Inspect: %+v (%v); want held with token %d", info, err, first.Token)
	}

	proxy.SetMode(testenv.Blackhole)
	callCtx, cancel = context.WithTimeout(ctx, callTimeout)
	_, err = p.Extend(callCtx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: 2 * time.Minute})
	cancel()
	unknown("Extend", err)
	proxy.SetMode(testenv.Pass)
	healed = time.Now()
	deadline = healed.Add(10 * time.Second)
	tries = 0
	var ext batontype.Lease
	for {
		tries++
		if ext, err = p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: 2 * time.Minute}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the retried Extend succeeded after %d tries, %v after the network healed", tries, time.Since(healed).Round(time.Millisecond))
	if err != nil || ext.Token != first.Token {
		t.Fatalf("retried Extend: token %d (%v); want the same lease, token %d", ext.Token, err, first.Token)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner}); err != nil {
		t.Fatalf("Release: %v", err)
	}
}
