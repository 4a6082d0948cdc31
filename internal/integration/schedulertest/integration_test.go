package schedulertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/scheduler"
)

// envChild carries an instanceSpec (JSON) to a child process running
// TestHelperProcess.
const envChild = "BATON_SCHEDULER_CHILD"

// providers open a provider for an instance, each on a client of its own
// that the instance closes (in.closers). The backend files fill it in.
var providers = map[string]func(ctx context.Context, spec instanceSpec, in *instance) (lockprovider.Provider, error){}

// setups prepare a backend for one exactly-once run: they fill in the
// spec's URL and Prefix, and migrate.
var setups = map[string]func(t *testing.T, pg *pgenv.PG, spec *instanceSpec){}

// instanceSpec describes one scheduler instance of the exactly-once test.
type instanceSpec struct {
	Backend  string        // "redis", "postgres" or "mysql"
	URL      string        // the backend: a redis:// URL, or a PostgreSQL URL with search_path
	Prefix   string        // Redis key prefix
	Witness  string        // PostgreSQL URL whose search_path holds the witness tables
	Name     string        // instance name, stored with each run
	Offset   time.Duration // this instance's clock offset; negative fires late
	Interval time.Duration // period of the jobs
}

// instanceStats is what an instance reports when it stops.
type instanceStats struct {
	Name     string
	Runs     int64
	Skips    int64
	Failures int64
	LockLost int64
	Errors   []string // job errors, for the log
}

type instance struct {
	spec    instanceSpec
	sched   *scheduler.Scheduler
	jobs    []*scheduler.Job
	closers []func()

	mu   sync.Mutex
	errs []string
}

const witnessSchemaSQL = `
CREATE TABLE witness (job text NOT NULL, tick timestamptz NOT NULL, instance text NOT NULL, token bigint NOT NULL,
  started timestamptz NOT NULL DEFAULT clock_timestamp(), finished timestamptz, UNIQUE (job, tick));
CREATE TABLE dups (job text NOT NULL, tick timestamptz NOT NULL, instance text NOT NULL);
CREATE TABLE skips (job text NOT NULL, tick timestamptz NOT NULL, instance text NOT NULL, reason text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE lost (job text NOT NULL, tick timestamptz NOT NULL, instance text NOT NULL);`

// startInstance builds a scheduler on its own backend client and starts it.
// Runs are recorded through witness, or, if it is nil, through a pool of
// the instance's own (child processes).
func startInstance(ctx context.Context, spec instanceSpec, witness *pgxpool.Pool) (*instance, error) {
	in := &instance{spec: spec}
	fail := func(err error) (*instance, error) { in.close(); return nil, err }

	if witness == nil {
		wcfg, err := pgxpool.ParseConfig(spec.Witness)
		if err != nil {
			return fail(err)
		}
		wcfg.MaxConns = 2
		witness, err = pgxpool.NewWithConfig(ctx, wcfg)
		if err != nil {
			return fail(err)
		}
		in.closers = append(in.closers, witness.Close)
		if err := warm(ctx, witness); err != nil {
			return fail(err)
		}
	}

	newProvider := providers[spec.Backend]
	if newProvider == nil {
		return fail(fmt.Errorf("unknown backend %q", spec.Backend))
	}
	provider, err := newProvider(ctx, spec, in)
	if err != nil {
		return fail(err)
	}

	recordSkip := func(ev scheduler.Event) {
		reason := "other"
		switch {
		case errors.Is(ev.Err, batontype.ErrNotAcquired):
			reason = "not_acquired"
		case errors.Is(ev.Err, batontype.ErrStaleTick):
			reason = "stale_tick"
		case errors.Is(ev.Err, scheduler.ErrStillRunning):
			reason = "still_running"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if missed, ok := errors.AsType[*scheduler.MissedError](ev.Err); ok {
			// Ticks that passed while this process stood still: one row
			// each.
			for tk := missed.First; !tk.After(missed.Last); tk = tk.Add(spec.Interval) {
				_, _ = witness.Exec(ctx, `INSERT INTO skips (job, tick, instance, reason) VALUES ($1, $2, $3, 'missed')`,
					ev.Job, tk, spec.Name)
			}
			return
		}
		_, _ = witness.Exec(ctx, `INSERT INTO skips (job, tick, instance, reason) VALUES ($1, $2, $3, $4)`,
			ev.Job, ev.Tick, spec.Name, reason)
	}
	in.sched, err = scheduler.New(provider, &scheduler.Config{
		Now:      offsetClock(spec.Offset),
		LockedBy: spec.Name,
		Observer: scheduler.Hooks{
			Skipped: recordSkip,
			// A run whose lease ended before it wrote its witness row
			// (the process starved past the trust window) claimed its
			// tick but left no row: recorded, so that it is not taken
			// for a tick that no instance claimed.
			LockLost: func(ev scheduler.Event) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, _ = witness.Exec(ctx, `INSERT INTO lost (job, tick, instance) VALUES ($1, $2, $3)`, ev.Job, ev.Tick, spec.Name)
			},
			Failed: func(ev scheduler.Event) {
				in.mu.Lock()
				defer in.mu.Unlock()
				in.errs = append(in.errs, fmt.Sprintf("%s %s: %v", ev.Job, ev.Tick.Format(time.StampMilli), ev.Err))
			},
		},
	})
	if err != nil {
		return fail(err)
	}
	in.closers = append(in.closers, func() { _ = in.sched.Close() })

	witnessRun := func(ctx context.Context, run scheduler.Run, finished bool) error {
		q := `INSERT INTO witness (job, tick, instance, token) VALUES ($1, $2, $3, $4)`
		if finished {
			q = `INSERT INTO witness (job, tick, instance, token, finished) VALUES ($1, $2, $3, $4, clock_timestamp())`
		}
		_, err := witness.Exec(ctx, q, run.Job, run.Tick, spec.Name, run.Token)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			_, _ = witness.Exec(context.WithoutCancel(ctx), `INSERT INTO dups (job, tick, instance) VALUES ($1, $2, $3)`, run.Job, run.Tick, spec.Name)
			return fmt.Errorf("tick %s ran twice: %w", run.Tick.Format(time.StampMilli), err)
		}
		return err
	}
	iv := spec.Interval
	// "exact": runs take a random time below half the interval; the lease
	// (0.9 interval) ends before the next tick even if a release is slow.
	exact, err := in.sched.Every(iv).Locked("exact", scheduler.AtMostFor(iv*9/10)).Do(
		func(ctx context.Context, run scheduler.Run) error {
			end := time.Now().Add(rand.N(iv / 2))
			if err := witnessRun(ctx, run, false); err != nil {
				return err
			}
			select {
			case <-time.After(time.Until(end)):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			_, err := witness.Exec(ctx, `UPDATE witness SET finished = clock_timestamp() WHERE job = $1 AND tick = $2`, run.Job, run.Tick)
			return err
		})
	if err != nil {
		return fail(err)
	}
	// "grace": a short run with AtLeastFor: replicas that try after it
	// finished still find the lock held.
	grace, err := in.sched.Every(iv).Locked("grace", scheduler.AtMostFor(iv*9/10), scheduler.AtLeastFor(iv*8/10)).Do(
		func(ctx context.Context, run scheduler.Run) error { return witnessRun(ctx, run, true) })
	if err != nil {
		return fail(err)
	}
	in.jobs = []*scheduler.Job{exact, grace}
	if err := in.sched.Start(); err != nil {
		return fail(err)
	}
	return in, nil
}

// warm opens all of a pool's connections, so that the first ticks do not
// pay for connection set-up.
func warm(ctx context.Context, pool *pgxpool.Pool) error {
	var conns []*pgxpool.Conn
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	return nil
}

// stop shuts the scheduler down gracefully and reports its counters.
func (in *instance) stop() instanceStats {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = in.sched.Shutdown(ctx)
	st := instanceStats{Name: in.spec.Name}
	for _, j := range in.jobs {
		s := j.Stats()
		st.Runs += s.Runs
		st.Skips += s.Skips
		st.Failures += s.Failures
		st.LockLost += s.LockLost
	}
	in.mu.Lock()
	st.Errors = append(st.Errors, in.errs...)
	in.mu.Unlock()
	in.close()
	return st
}

func (in *instance) close() {
	for i := len(in.closers) - 1; i >= 0; i-- {
		in.closers[i]()
	}
	in.closers = nil
}

// TestHelperProcess is the child side of TestExactlyOnce: it runs one
// scheduler instance until its stdin closes or it gets SIGTERM, then
// prints its counters. Run directly, it has nothing to do.
func TestHelperProcess(t *testing.T) {
	raw := os.Getenv(envChild)
	if raw == "" {
		t.Skip("helper process for TestExactlyOnce; runs only when started by it")
	}
	var spec instanceSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatalf("child spec: %v", err)
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	in, err := startInstance(ctx, spec, nil)
	if err != nil {
		t.Fatalf("child %s: %v", spec.Name, err)
	}
	fmt.Println("READY")
	stdinClosed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdinClosed) }()
	select {
	case <-stdinClosed:
	case <-ctx.Done():
	}
	st := in.stop()
	b, _ := json.Marshal(st)
	fmt.Println("STATS " + string(b))
	if ctx.Err() == nil {
		<-stdinClosed
	}
}

// child is a scheduler instance in another OS process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr bytes.Buffer
}

func startChild(t *testing.T, spec instanceSpec) *child {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v=false")}
	c.cmd.Env = append(os.Environ(), envChild+"="+string(raw))
	c.cmd.Stderr = &c.stderr
	c.stdin, err = c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.lines = make(chan string, 16)
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

func (c *child) waitReady(t *testing.T) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				_ = c.cmd.Wait()
				t.Fatalf("child exited before READY: %s", c.stderr.String())
			}
			if l == "READY" {
				return
			}
		case <-timeout:
			t.Fatalf("child not ready after 60s: %s", c.stderr.String())
		}
	}
}

// stop closes the child's stdin and collects its counters.
func (c *child) stop(t *testing.T) instanceStats {
	t.Helper()
	_ = c.stdin.Close()
	var st instanceStats
	var got bool
	for l := range c.lines {
		if s, ok := strings.CutPrefix(l, "STATS "); ok {
			if err := json.Unmarshal([]byte(s), &st); err != nil {
				t.Errorf("child stats %q: %v", s, err)
			}
			got = true
		}
	}
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("child exited with %v: %s", err, c.stderr.String())
	}
	if !got {
		t.Errorf("child printed no stats: %s", c.stderr.String())
	}
	return st
}

// TestExactlyOnce runs 10 scheduler instances per backend, two of them in
// separate processes and four with lagging clocks, for at least 60 ticks
// of a locked job, and checks in a witness table with UNIQUE(job, tick)
// that every tick ran exactly once.
func TestExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the exactly-once run takes about 40s")
	}
	const (
		interval = 500 * time.Millisecond
		ticks    = 62
	)
	for _, backend := range []string{"postgres", "redis", "mysql"} {
		if setups[backend] == nil {
			t.Fatalf("backend %s is not built into this test binary", backend)
		}
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			exactlyOnce(t, backend, interval, ticks)
		})
	}
}

func exactlyOnce(t *testing.T, backend string, interval time.Duration, ticks int) {
	ctx := context.Background()
	pg := pgenv.Schema(t)
	if _, err := pg.Pool.Exec(ctx, witnessSchemaSQL); err != nil {
		t.Fatal(err)
	}
	base := instanceSpec{Backend: backend, Witness: pg.URL, Interval: interval}
	// The in-process instances record their runs through one shared pool,
	// to spare connections of the shared server.
	witness := pg.Pool
	if err := warm(ctx, witness); err != nil {
		t.Fatal(err)
	}
	setups[backend](t, pg, &base)
	// Instances 4-7 and child 9 lag by up to a third of the interval.
	offsets := []time.Duration{0, 0, 0, 0, -interval / 12, -interval / 6, -interval / 4, -interval / 3, 0, -interval / 5}
	const inProcess = 8
	var children []*child
	for i := inProcess; i < len(offsets); i++ {
		spec := base
		spec.Name, spec.Offset = fmt.Sprintf("%s-child-%d", backend, i), offsets[i]
		children = append(children, startChild(t, spec))
	}
	var instances []*instance
	for i := range inProcess {
		spec := base
		spec.Name, spec.Offset = fmt.Sprintf("%s-%d", backend, i), offsets[i]
		in, err := startInstance(ctx, spec, witness)
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		t.Cleanup(in.close)
		instances = append(instances, in)
	}
	for _, c := range children {
		c.waitReady(t)
	}
	// The window starts two ticks after every instance runs and ends one
	// tick before any stops.
	first := time.Now().Truncate(interval).Add(2 * interval)
	last := first.Add(time.Duration(ticks-1) * interval)
	time.Sleep(time.Until(last.Add(interval + interval/2)))

	var stats []instanceStats
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, in := range instances {
		wg.Go(func() { st := in.stop(); mu.Lock(); stats = append(stats, st); mu.Unlock() })
	}
	for _, c := range children {
		wg.Go(func() { st := c.stop(t); mu.Lock(); stats = append(stats, st); mu.Unlock() })
	}
	wg.Wait()

	var runs, skips, failures, lost int64
	for _, st := range stats {
		runs, skips, failures, lost = runs+st.Runs, skips+st.Skips, failures+st.Failures, lost+st.LockLost
		for _, e := range st.Errors {
			// A run starved of CPU past its lease is cancelled (lock
			// lost): that is the scheduler doing its job. What must never
			// happen, a tick running twice or not at all, is checked
			// below from the witness table.
			t.Logf("%s: job error: %s", st.Name, e)
		}
	}
	if len(stats) != len(offsets) {
		t.Errorf("%d instances reported, want %d", len(stats), len(offsets))
	}

	var dups int
	if err := pg.Pool.QueryRow(ctx, `SELECT count(*) FROM dups`).Scan(&dups); err != nil {
		t.Fatal(err)
	}
	if dups != 0 {
		t.Errorf("%d unique violations in the witness table: ticks ran twice", dups)
	}
	// tickSet reads the ticks a query returns.
	tickSet := func(q string, args ...any) map[int64]bool {
		rows, err := pg.Pool.Query(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		ticks, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
		if err != nil {
			t.Fatal(err)
		}
		set := make(map[int64]bool, len(ticks))
		for _, tk := range ticks {
			set[tk.UnixMilli()] = true
		}
		return set
	}
	for _, job := range []string{"exact", "grace"} {
		seen := tickSet(`SELECT tick FROM witness WHERE job = $1 AND tick BETWEEN $2 AND $3`, job, first, last)
		lostTicks := tickSet(`SELECT tick FROM lost WHERE job = $1`, job)
		// Why each instance skipped each tick.
		reasons := map[int64]map[string]bool{}
		reporters := map[int64]map[string]bool{}
		rows, err := pg.Pool.Query(ctx, `SELECT tick, reason, instance FROM skips WHERE job = $1`, job)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var tick time.Time
			var reason, inst string
			if err := rows.Scan(&tick, &reason, &inst); err != nil {
				t.Fatal(err)
			}
			if reasons[tick.UnixMilli()] == nil {
				reasons[tick.UnixMilli()] = map[string]bool{}
				reporters[tick.UnixMilli()] = map[string]bool{}
			}
			reasons[tick.UnixMilli()][reason] = true
			reporters[tick.UnixMilli()][inst] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		// behind reports a tick that every instance skipped because the
		// previous tick's claim or run was still going here, or its lease
		// still held elsewhere: a stall of the backend or of the process
		// longer than the interval, which the scheduler answers by
		// skipping, by design.
		behind := func(tk time.Time) bool {
			rs := reasons[tk.UnixMilli()]
			for r := range rs {
				if r != "still_running" && r != "not_acquired" {
					return false
				}
			}
			return len(rs) > 0
		}
		// stalled reports a tick that passed while every instance stood
		// still (the machine paused, or its wall clock stepped forward):
		// each of them said so (scheduler.MissedError), and none could
		// have run it.
		stalled := func(tk time.Time) bool {
			rs := reasons[tk.UnixMilli()]
			if !rs["missed"] || len(reporters[tk.UnixMilli()]) < len(offsets) {
				return false
			}
			for r := range rs {
				if r != "missed" && r != "still_running" && r != "not_acquired" {
					return false
				}
			}
			return true
		}
		var missing, lostRuns, late, frozen []string
		for tk := first; !tk.After(last); tk = tk.Add(interval) {
			switch {
			case seen[tk.UnixMilli()]:
			case lostTicks[tk.UnixMilli()]:
				lostRuns = append(lostRuns, tk.Format(time.StampMilli))
			case stalled(tk):
				frozen = append(frozen, tk.Format(time.StampMilli))
			case behind(tk):
				late = append(late, tk.Format(time.StampMilli))
			default:
				missing = append(missing, tk.Format(time.StampMilli))
			}
		}
		if len(missing) > 0 {
			t.Errorf("job %s: %d of %d ticks ran; claimed by no instance: %v", job, len(seen), ticks, missing)
			rows, err := pg.Pool.Query(ctx, `SELECT tick, instance, reason FROM skips WHERE job = $1 ORDER BY tick, instance`, job)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var tick time.Time
				var inst, reason string
				if err := rows.Scan(&tick, &inst, &reason); err != nil {
					t.Fatal(err)
				}
				if slices.Contains(missing, tick.Format(time.StampMilli)) {
					t.Logf("job %s, tick %s: %s skipped it: %s", job, tick.Format(time.StampMilli), inst, reason)
				}
			}
		}
		// A lost run is the scheduler cancelling a starved holder, and a
		// tick skipped behind a stall is its answer to a late claim or
		// release; neither is a missed tick, but most ticks must run to
		// their witness row.
		if len(lostRuns) > 0 {
			t.Logf("job %s: %d ticks claimed but cancelled before their witness row (lock lost): %v", job, len(lostRuns), lostRuns)
		}
		if len(late) > 0 {
			t.Logf("job %s: %d ticks skipped by every instance behind a previous claim or run still going: %v", job, len(late), late)
		}
		if len(frozen) > 0 {
			t.Logf("job %s: %d ticks passed while every instance stood still (machine paused or wall clock stepped; each reported them missed): %v", job, len(frozen), frozen)
		}
		// The machine's stalls are outside the scheduler's reach, but
		// enough ticks must remain for the run to show anything.
		if len(seen) < ticks/3 {
			t.Errorf("job %s: only %d of %d ticks ran, want at least %d", job, len(seen), ticks, ticks/3)
		}
		if len(lostRuns)+len(late) > ticks/5 {
			t.Errorf("job %s: %d of %d ticks lost or skipped behind a stall, want at most %d", job, len(lostRuns)+len(late), ticks, ticks/5)
		}
	}

	// The grace period: replicas that tried after the short run had
	// finished were refused because the lock was still held.
	var afterRun, staleGrace, byInstance int
	if err := pg.Pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE s.reason = 'not_acquired' AND s.at > w.finished),
		       count(*) FILTER (WHERE s.reason = 'stale_tick'),
		       count(DISTINCT w.instance)
		FROM skips s JOIN witness w ON w.job = s.job AND w.tick = s.tick
		WHERE s.job = 'grace'`).Scan(&afterRun, &staleGrace, &byInstance); err != nil {
		t.Fatal(err)
	}
	if afterRun < ticks/2 {
		t.Errorf("only %d skips of job grace came after the run had finished and found the lock held; want >= %d", afterRun, ticks/2)
	}
	t.Logf("%s: %d ticks x 2 jobs on %d instances (%d in child processes): %d runs, %d skips, %d failures, %d lost locks, %d duplicates; "+
		"grace job: %d skips after the run finished refused by the held lock (%d stale-tick), winners spread over %d instances",
		backend, ticks, len(offsets), len(children), runs, skips, failures, lost, dups, afterRun, staleGrace, byInstance)
}
