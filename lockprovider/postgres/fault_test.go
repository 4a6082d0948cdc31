package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// Replicas whose clocks differ by about a period claim different ticks at
// the same moment: one claims the tick that already ran (stale), another
// the new one. The stale claim must not make the new one fail: the name is
// free and the new tick was never granted, so it must be granted every
// time. Each round races the two claims on their own connections.
func TestFaultStaleTickRace(t *testing.T) {
	t.Parallel()
	const rounds = 300
	p, _ := newProvider(t, nil)
	ctx := t.Context()
	old := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	next := old.Add(time.Second)
	var lost int
	var reasons = map[string]int{}
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
		// The stale claim is refused: as stale, or as held when the new
		// claim got there first.
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

// prepareTracer counts statement preparations, each a round trip of its
// own before the statement runs.
type prepareTracer struct{ n atomic.Int64 }

func (c *prepareTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (c *prepareTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *prepareTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *prepareTracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// A renewal is one round trip even on a connection that never ran it, as
// after a reconnect: no statement preparation first. Under latency an
// extra round trip on the renewal path is what loses auto-renewed leases.
func TestFaultExtendNoPrepare(t *testing.T) {
	t.Parallel()
	_, pg := newProvider(t, nil)
	ctx := t.Context()
	tr := &prepareTracer{}
	cfg, err := pgxpool.ParseConfig(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tr
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p, err := postgres.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := params("renewed", time.Minute)
	if _, err := p.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	before := tr.n.Load()
	l, err := p.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: time.Hour, AtLeastFor: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.n.Load() - before; n != 0 {
		t.Errorf("the first Extend on a connection prepared %d statements first; want 0", n)
	}
	if d := l.Until.Sub(l.GrantedAt); d < time.Hour-time.Minute || l.AtLeastUntil.Before(l.GrantedAt) {
		t.Errorf("Extend in exec mode: lease %+v", l)
	}
}

// Backend trouble is reported as unavailability, never as "held": a refused
// dial and a closed pool as requests not sent (definite), a server that
// stops answering as unknown outcome, within the call's deadline.
func TestFaultUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	check := func(what string, err error, notSent bool) {
		t.Helper()
		var u *batontype.UnavailableError
		switch {
		case !errors.As(err, &u) || !errors.Is(err, batontype.ErrUnavailable):
			t.Errorf("%s: %v; want an *UnavailableError", what, err)
		case errors.Is(err, batontype.ErrNotAcquired):
			t.Errorf("%s: %v matches ErrNotAcquired", what, err)
		case u.NotSent != notSent:
			t.Errorf("%s: NotSent %v; want %v (%v)", what, u.NotSent, notSent, err)
		case batontype.Definite(err) != notSent:
			t.Errorf("%s: Definite %v; want %v", what, batontype.Definite(err), notSent)
		}
		t.Logf("%s: %v", what, err)
	}

	// Nothing listens on the port: every dial is refused.
	refused, err := pgxpool.New(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/test?sslmode=disable&connect_timeout=1", testenv.FreePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	pr, err := postgres.New(refused, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pr.Acquire(ctx, params("refused", time.Minute))
	check("Acquire, dial refused", err, true)
	err = pr.Release(ctx, lockprovider.ReleaseParams{Name: "refused", Owner: lockprovider.NewOwner()})
	check("Release, dial refused", err, true)

	_, pg := newProvider(t, nil)
	closed, err := pgxpool.New(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	pc, err := postgres.New(closed, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pc.Acquire(ctx, params("closed", time.Minute))
	check("Acquire, pool closed", err, true)

	// A server that stops answering: the call ends with its deadline.
	proxy, u := testenv.ProxyURL(t, pg.URL)
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pb, err := postgres.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := params("blackholed", time.Minute)
	if _, err := pb.Acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	proxy.SetMode(testenv.Blackhole)
	for _, op := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Acquire", func(ctx context.Context) error {
			_, err := pb.Acquire(ctx, params("blackholed-2", time.Minute))
			return err
		}},
		{"Extend", func(ctx context.Context) error {
			_, err := pb.Extend(ctx, lockprovider.ExtendParams{Name: a.Name, Owner: a.Owner, AtMostFor: time.Minute})
			return err
		}},
		{"Release", func(ctx context.Context) error {
			return pb.Release(ctx, lockprovider.ReleaseParams{Name: a.Name, Owner: a.Owner})
		}},
		{"NotifyRelease", func(ctx context.Context) error {
			stop, err := pb.NotifyRelease(ctx, "blackholed-3", make(chan struct{}, 1))
			if err == nil {
				stop()
				return errors.New("registered through a blackhole")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("NotifyRelease: %w; want the context's error", err)
			}
			return nil
		}},
	} {
		const deadline = time.Second
		cctx, cancel := context.WithTimeout(ctx, deadline)
		start := time.Now()
		err := op.call(cctx)
		took := time.Since(start)
		cancel()
		if op.name == "NotifyRelease" {
			if err != nil {
				t.Error(err)
			}
		} else {
			check(op.name+", blackholed", err, false)
		}
		if took > deadline+300*time.Millisecond {
			t.Errorf("%s with a %v deadline through a blackhole returned after %v", op.name, deadline, took)
		}
	}
	proxy.SetMode(testenv.Pass)
}

// Typed nil handles are refused at construction, not a panic at first use.
func TestTypedNilDB(t *testing.T) {
	t.Parallel()
	for _, db := range []postgres.DB{(*pgxpool.Pool)(nil), (*pgx.Conn)(nil)} {
		_, err := postgres.New(db, nil)
		var ve *batontype.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("New(%T(nil)): %v; want a ValidationError matching ErrInvalid", db, err)
		}
	}
}
