package schedulertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

// faultPeriod is the period of the job in the fault tests.
const faultPeriod = 200 * time.Millisecond

// faultRun is a locked job on several scheduler instances, each on a lock
// store client of its own, that records every run in a witness table with
// UNIQUE (job, tick) on the shared PostgreSQL: a second run of a tick is a
// unique violation, counted in dups.
type faultRun struct {
	witness *pgenv.PG
	recs    []*recorder
	scheds  []*scheduler.Scheduler
	dups    atomic.Int64

	mu     sync.Mutex
	tokens []tokenAt // every run's token, in the order the runs started
}

type tokenAt struct {
	at    time.Time
	tick  time.Time
	token int64
}

// startFaultRun starts one scheduler per provider, with a call timeout short
// enough that calls into a dead server fail within a tick or two.
func startFaultRun(t *testing.T, providers []lockprovider.Provider) *faultRun {
	t.Helper()
	ctx := context.Background()
	fr := &faultRun{witness: pgenv.Schema(t)}
	if _, err := fr.witness.Pool.Exec(ctx, `CREATE TABLE witness (job text NOT NULL, tick timestamptz NOT NULL,
		instance int NOT NULL, token bigint NOT NULL, UNIQUE (job, tick))`); err != nil {
		t.Fatal(err)
	}
	for i, p := range providers {
		rec := &recorder{}
		s := newSched(t, p, &scheduler.Config{
			LockedBy:    fmt.Sprintf("instance-%d", i),
			CallTimeout: 500 * time.Millisecond,
			Observer:    rec.hooks(),
		})
		_, err := s.Every(faultPeriod).Locked("report",
			scheduler.AtMostFor(2*time.Second), scheduler.AtLeastFor(faultPeriod/2)).
			Do(func(ctx context.Context, run scheduler.Run) error {
				fr.mu.Lock()
				fr.tokens = append(fr.tokens, tokenAt{time.Now(), run.Tick, run.Token})
				fr.mu.Unlock()
				_, err := fr.witness.Pool.Exec(ctx, `INSERT INTO witness (job, tick, instance, token) VALUES ($1, $2, $3, $4)`,
					run.Job, run.Tick, i, run.Token)
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == "23505" {
					fr.dups.Add(1)
					t.Logf("instance %d: tick %s ran twice (token %d)", i, run.Tick.Format(time.StampMilli), run.Token)
				} else if err != nil {
					t.Errorf("instance %d: witness insert: %v", i, err)
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		fr.recs = append(fr.recs, rec)
		fr.scheds = append(fr.scheds, s)
	}
	for _, s := range fr.scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	return fr
}

// stop shuts every scheduler down, waiting for running jobs.
func (fr *faultRun) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range fr.scheds {
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}
}

// ticksAfter counts the witness rows of ticks after at.
func (fr *faultRun) ticksAfter(t *testing.T, at time.Time) int {
	t.Helper()
	var n int
	if err := fr.witness.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM witness WHERE tick > $1`, at).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkFailedNotRun checks that each acquire failure was reported through
// the Failed hook with an error of unknown outcome and that the instance did
// not run that tick. It returns the number of such failures.
func (fr *faultRun) checkFailedNotRun(t *testing.T) int {
	t.Helper()
	n := 0
	for i, rec := range fr.recs {
		started := map[time.Time]bool{}
		for _, ev := range rec.get("started") {
			started[ev.Tick] = true
		}
		for _, ev := range rec.get("failed") {
			n++
			if ev.Err == nil || errors.Is(ev.Err, batontype.ErrNotAcquired) || errors.Is(ev.Err, batontype.ErrStaleTick) {
				t.Errorf("instance %d: Failed for tick %s with a definite or no error: %v", i, ev.Tick.Format(time.StampMilli), ev.Err)
			}
			if started[ev.Tick] {
				t.Errorf("instance %d: tick %s reported Failed (%v) and also started", i, ev.Tick.Format(time.StampMilli), ev.Err)
			}
		}
	}
	return n
}

func (fr *faultRun) runs() int {
	n := 0
	for _, rec := range fr.recs {
		n += len(rec.get("started"))
	}
	return n
}

// waitTicksAfter polls until a tick after at was recorded.
func (fr *faultRun) waitTicksAfter(t *testing.T, at time.Time, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for fr.ticksAfter(t, at) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no run of a tick after %s within %v", at.Format(time.StampMilli), limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Three instances on a private PostgreSQL lock server that is killed
// (SIGKILL, as a crash) and restarted (crash recovery keeps the committed
// leases and tick records) while the job runs every 200ms.
func TestFaultPostgresCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testenv.StartPostgres(t)
	var providers []lockprovider.Provider
	for i := range 3 {
		cfg, err := pgxpool.ParseConfig(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = 2
		cfg.ConnConfig.ConnectTimeout = 300 * time.Millisecond
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		p, err := pgprovider.New(pool, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := p.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		providers = append(providers, p)
	}
	fr := startFaultRun(t, providers)

	time.Sleep(2 * time.Second)
	before := fr.runs()
	srv.Kill()
	killed := time.Now()
	time.Sleep(time.Second) // down for five ticks
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	t.Logf("server down from %s to %s (%v)", killed.Format(time.StampMilli), restarted.Format(time.StampMilli),
		restarted.Sub(killed).Round(time.Millisecond))
	fr.waitTicksAfter(t, restarted.Add(time.Second), 5*time.Second)
	time.Sleep(time.Second)
	fr.stop(t)

	failures := fr.checkFailedNotRun(t)
	t.Logf("runs: %d before the crash, %d in all; %d after restart+1s; %d acquires failed; %d duplicates",
		before, fr.runs(), fr.ticksAfter(t, restarted.Add(time.Second)), failures, fr.dups.Load())
	if before == 0 {
		t.Error("no run before the crash")
	}
	if failures == 0 {
		t.Error("no acquire failure reported while the server was down")
	}
	if n := fr.dups.Load(); n != 0 {
		t.Errorf("%d ticks ran twice", n)
	}
}

// Three instances on a private Redis whose client connections are killed
// (CLIENT KILL TYPE normal) every 300ms: go-redis reconnects, the job keeps
// running, and no tick runs twice.
func TestFaultRedisDroppedConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testenv.StartRedis(t)
	var providers []lockprovider.Provider
	for range 3 {
		c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), PoolSize: 4, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		p, err := redisprovider.New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		providers = append(providers, p)
	}
	admin := redisenv.Server(t, srv)
	fr := startFaultRun(t, providers)

	time.Sleep(time.Second)
	first := time.Now()
	killedConns := int64(0)
	for range 10 {
		n, err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Int64()
		if err != nil {
			t.Fatalf("CLIENT KILL: %v", err)
		}
		killedConns += n
		time.Sleep(300 * time.Millisecond)
	}
	last := time.Now()
	fr.waitTicksAfter(t, last.Add(faultPeriod), 5*time.Second)
	fr.stop(t)

	var during int
	if err := fr.witness.Pool.QueryRow(ctx, `SELECT count(*) FROM witness WHERE tick BETWEEN $1 AND $2`,
		first, last).Scan(&during); err != nil {
		t.Fatal(err)
	}
	failures := fr.checkFailedNotRun(t)
	t.Logf("%d connections killed in %v; %d of about %d ticks ran meanwhile; %d runs in all; %d acquires failed; %d duplicates",
		killedConns, last.Sub(first).Round(time.Millisecond), during, int(last.Sub(first)/faultPeriod), fr.runs(), failures, fr.dups.Load())
	if killedConns == 0 {
		t.Error("CLIENT KILL found no connection to kill")
	}
	if during == 0 {
		t.Error("no tick ran while connections were being killed")
	}
	if n := fr.dups.Load(); n != 0 {
		t.Errorf("%d ticks ran twice", n)
	}
}

// A Redis restart without persistence forgets the leases and the latest
// tick of each job, so tick identity cannot stop a replica that fires late
// from running a tick again; this test documents what happens without
// asserting it. What must hold: the fencing counter restarts from the
// server's clock, so every token after the restart is larger than every
// token before it, and a fenced resource still rejects the old runs.
func TestFaultRedisRestartTickIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testenv.StartRedis(t)

	// The provider level first: the same tick is granted again after the
	// restart (logged, not asserted).
	direct := redisenv.Server(t, srv)
	p, err := redisprovider.New(direct, nil)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Now().Truncate(time.Second)
	acquire := func() (batontype.Lease, error) {
		return p.Acquire(ctx, lockprovider.AcquireParams{Name: "direct", Owner: lockprovider.NewOwner(),
			AtMostFor: time.Second, Tick: tick})
	}
	first, err := acquire()
	if err != nil {
		t.Fatal(err)
	}

	var providers []lockprovider.Provider
	for range 2 {
		c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), PoolSize: 4, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		p, err := redisprovider.New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		providers = append(providers, p)
	}
	fr := startFaultRun(t, providers)
	time.Sleep(1500 * time.Millisecond)
	restarting := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	fr.waitTicksAfter(t, restarted.Add(time.Second), 5*time.Second)
	fr.stop(t)

	var again batontype.Lease
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if again, err = acquire(); err == nil || errors.Is(err, batontype.ErrStaleTick) || time.Now().After(deadline) {
			break
		}
	}
	switch {
	case err == nil:
		t.Logf("after the restart, tick %s of %q was granted again (token %d, before %d): tick identity was lost with the data",
			tick.Format(time.StampMilli), "direct", again.Token, first.Token)
		if again.Token <= first.Token {
			t.Errorf("token after the restart %d is not larger than before %d", again.Token, first.Token)
		}
	case errors.Is(err, batontype.ErrStaleTick):
		t.Logf("after the restart, tick %s was refused as stale", tick.Format(time.StampMilli))
	default:
		t.Fatalf("acquire after the restart: %v", err)
	}

	fr.mu.Lock()
	defer fr.mu.Unlock()
	var maxBefore, minAfter int64
	var nBefore, nAfter int
	for _, r := range fr.tokens {
		// Runs that started before the restart began hold tokens of the
		// old server; runs of ticks after it returned were acquired
		// from the new one (an acquire is sent at its tick or later).
		// Runs in between are ambiguous and left out.
		switch {
		case r.at.Before(restarting):
			maxBefore = max(maxBefore, r.token)
			nBefore++
		case r.tick.After(restarted):
			if nAfter == 0 || r.token < minAfter {
				minAfter = r.token
			}
			nAfter++
		}
	}
	t.Logf("runs: %d before the restart (max token %d), %d after (min token %d); %d ticks ran twice",
		nBefore, maxBefore, nAfter, minAfter, fr.dups.Load())
	if nBefore == 0 || nAfter == 0 {
		t.Fatalf("runs before the restart: %d, after: %d", nBefore, nAfter)
	}
	if minAfter <= maxBefore {
		t.Errorf("a token after the restart (%d) is not larger than one before it (%d)", minAfter, maxBefore)
	}
}

// A job with keep-alive on a private PostgreSQL that is paused (SIGSTOP)
// for three lease lengths while the job runs: extensions cannot get
// through, so the job's context must be cancelled with ErrLockLost within
// about one lease length and the LockLost hook must fire; after the resume
// the job runs again under a larger token.
func TestFaultPostgresPauseAutoRenew(t *testing.T) {
	t.Parallel()
	const atMostFor = 600 * time.Millisecond
	ctx := context.Background()
	srv := testenv.StartPostgres(t)
	cfg, err := pgxpool.ParseConfig(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.ConnectTimeout = 300 * time.Millisecond
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p, err := pgprovider.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	type ended struct {
		at    time.Time
		cause error
	}
	started := make(chan int64, 100)
	firstEnded := make(chan ended, 1)
	var runs atomic.Int64
	rec := &recorder{}
	s := newSched(t, p, &scheduler.Config{CallTimeout: 300 * time.Millisecond, Observer: rec.hooks()})
	_, err = s.Every(faultPeriod).Locked("long", scheduler.AtMostFor(atMostFor), scheduler.AutoRenew()).
		Do(func(ctx context.Context, run scheduler.Run) error {
			started <- run.Token
			if runs.Add(1) > 1 {
				return nil
			}
			<-ctx.Done() // the first run lasts until its lease is lost
			firstEnded <- ended{time.Now(), context.Cause(ctx)}
			return ctx.Err()
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	var firstToken int64
	select {
	case firstToken = <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the job did not start")
	}
	// Keep-alive holds the lease well past its length.
	time.Sleep(3 * atMostFor)
	select {
	case e := <-firstEnded:
		t.Fatalf("the job's context ended before the pause: %v", e.cause)
	default:
	}

	srv.Pause()
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	var e ended
	select {
	case e = <-firstEnded:
	case <-time.After(10 * atMostFor):
		t.Fatalf("the job's context not ended %v into the pause", 10*atMostFor)
	}
	lostAfter := e.at.Sub(paused)
	t.Logf("job context ended %v into the pause (lease %v), cause: %v", lostAfter.Round(time.Millisecond), atMostFor, e.cause)
	if !errors.Is(e.cause, scheduler.ErrLockLost) {
		t.Errorf("cause %v; want ErrLockLost", e.cause)
	}
	if lostAfter > 2*atMostFor {
		t.Errorf("lock loss seen %v into the pause; the lease is %v", lostAfter, atMostFor)
	}
	time.Sleep(time.Until(paused.Add(3 * atMostFor)))
	srv.Resume()
	resumed = true
	resumedAt := time.Now()

	// Runs resume after the server does, under larger tokens.
	deadline := time.After(5 * time.Second)
	for {
		var token int64
		select {
		case token = <-started:
		case <-deadline:
			t.Fatal("no run within 5s of the resume")
		}
		if time.Now().Before(resumedAt) {
			continue
		}
		if token <= firstToken {
			t.Errorf("token after the pause %d; before %d", token, firstToken)
		}
		break
	}
	shutdownCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Shutdown(shutdownCtx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if n := len(rec.get("lost")); n != 1 {
		t.Errorf("LockLost hook called %d times; want 1", n)
	}
	t.Logf("Failed events (the lost run, acquires during the pause): %d; ticks skipped: %d", len(rec.get("failed")), len(rec.get("skipped")))
}

// Two instances on PostgreSQL whose clocks are a period apart (-250 ms and
// +250 ms) run a job every 500 ms. At each instant the instance behind
// claims the tick that the instance ahead already ran, at the moment the
// instance ahead claims the next one. The stale claim must not make the new
// one fail: every tick runs, exactly once, and the instance ahead runs each
// tick early by its offset. (The provider-level race behind this is
// TestFaultStaleTickRace in lockprovider/postgres; at this level the
// instance behind usually rescues a tick lost that way, late.)
func TestFaultPostgresClockSkewTicks(t *testing.T) {
	t.Parallel()
	const (
		period = 500 * time.Millisecond
		skew   = period / 2
		runFor = 8 * time.Second
	)
	ctx := context.Background()
	pg := pgenv.Schema(t)
	type run struct {
		instance int
		tick     time.Time
		at       time.Time
	}
	var (
		mu   sync.Mutex
		runs []run
	)
	var scheds []*scheduler.Scheduler
	offsets := []time.Duration{-skew, skew}
	recs := make([]*recorder, len(offsets))
	for i, offset := range offsets {
		recs[i] = &recorder{}
		cfg, err := pgxpool.ParseConfig(pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		p, err := pgprovider.New(pool, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := p.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		s := newSched(t, p, &scheduler.Config{LockedBy: fmt.Sprint("instance-", i), Now: offsetClock(offset),
			CallTimeout: time.Second, Observer: recs[i].hooks()})
		_, err = s.Every(period).Locked("skewed", scheduler.AtMostFor(2*time.Second), scheduler.AtLeastFor(period/2)).
			Do(func(ctx context.Context, r scheduler.Run) error {
				mu.Lock()
				runs = append(runs, run{i, r.Tick, time.Now()})
				mu.Unlock()
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	for _, s := range scheds {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(runFor)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, s := range scheds {
		if err := s.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	for i, rec := range recs {
		reasons := map[string]int{}
		for _, ev := range rec.get("skipped") {
			reasons[fmt.Sprint(ev.Err)]++
		}
		for _, ev := range rec.get("failed") {
			reasons["failed: "+fmt.Sprint(ev.Err)]++
		}
		t.Logf("instance %d: not run: %v", i, reasons)
	}
	if len(runs) == 0 {
		t.Fatal("no run")
	}
	// Count from the first tick of the instance ahead: ticks before it
	// were due before that instance started, and each of the others may
	// find them already passed by a newer grant.
	count := map[time.Time]int{}
	var first, last time.Time
	byInstance := map[int]int{}
	var early time.Duration
	for _, r := range runs {
		count[r.tick]++
		byInstance[r.instance]++
		if r.instance == len(offsets)-1 && (first.IsZero() || r.tick.Before(first)) {
			first = r.tick
		}
		if r.tick.After(last) {
			last = r.tick
		}
		if r.instance == len(offsets)-1 {
			early = max(early, r.tick.Sub(r.at))
		}
	}
	if first.IsZero() {
		t.Fatalf("the instance ahead never ran; runs per instance: %v", byInstance)
	}
	// A tick that came while the previous run's lease was still held (its
	// release late: the process starved) is skipped by its holder as
	// still running and refused elsewhere as held, by design; it is not
	// a tick that the skew made every instance pass over.
	stillRunning := map[time.Time]bool{}
	for _, rec := range recs {
		for _, ev := range rec.get("skipped") {
			if errors.Is(ev.Err, scheduler.ErrStillRunning) {
				stillRunning[ev.Tick] = true
			}
		}
	}
	var missing, twice, late int
	for tick := first; !tick.After(last); tick = tick.Add(period) {
		switch count[tick] {
		case 0:
			if stillRunning[tick] {
				late++
				t.Logf("tick %s: not run, its previous run still running (a late release)", tick.Format(time.StampMilli))
				continue
			}
			missing++
			t.Logf("tick %s: not run", tick.Format(time.StampMilli))
		case 1:
		default:
			twice++
			t.Logf("tick %s: run %d times", tick.Format(time.StampMilli), count[tick])
		}
	}
	t.Logf("%d ticks from %s to %s; runs per instance (-250 ms, +250 ms): %v; missed %d; run twice %d; the instance ahead ran its ticks up to %v early",
		int(last.Sub(first)/period)+1, first.Format(time.StampMilli), last.Format(time.StampMilli), byInstance, missing, twice, early.Round(time.Millisecond))
	if missing != 0 {
		t.Errorf("%d ticks were run by no instance", missing)
	}
	// Under a loaded test run such stalls are common; most ticks must
	// still run, or the test would show nothing about skew.
	if total := int(last.Sub(first)/period) + 1; late*3 > total {
		t.Errorf("%d of %d ticks skipped behind a late release, want at most a third", late, total)
	}
	if twice != 0 {
		t.Errorf("%d ticks ran twice", twice)
	}
}
