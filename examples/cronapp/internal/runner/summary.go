package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/examples/cronapp/internal/wire"
)

// Row counts what one replica did for one job ("all" for the job's total).
type Row struct {
	Job, Replica string
	Ticks        int // ticks at which the replica handled the job
	Runs         int // locked jobs: ticks it ran; customer-sync: customers it synced
	Skips        int // locked jobs: ticks another replica had; customer-sync: customers held elsewhere
	Rejected     int // fenced writes refused (fence.ErrStaleToken)
	RateLimited  int // third-party calls refused by the token bucket
	LockLost     int // runs whose lease ended while they ran
	Failed       int // job errors and acquires of unknown outcome
}

// Check is the exactly-once verdict for one locked job.
type Check struct {
	Job        string
	Expected   int         // ticks in the window
	Once       int         // of those, ticks with exactly one run
	Missing    []time.Time // ticks in the window without a run
	Stalled    []time.Time // of those, ticks that every replica reported missed: the machine stood still
	Duplicates int         // second runs of a tick (witness conflicts), anywhere
	LogRuns    int         // ticks in the window the replicas' logs show started by exactly one replica
}

// Summary is the outcome of a demo run.
type Summary struct {
	RunID      string
	Replicas   int
	From, To   time.Time // the window of ticks checked
	Rows       []Row
	Checks     []Check
	Rejected   int // stale writes refused
	RateLimit  int // calls refused by the rate limit
	Synced     int // customer syncs
	SyncDedup  int // customer syncs stopped by the idempotency key
	StockStart int64
	StockEnd   int64
	Applied    int   // inventory writes applied
	LastFence  int64 // inventory row's last_fence at the end
	Frozen     string
	Failures   []string
	Pass       bool
}

const stockStart = 1000 // cronapp's initial widget stock

type rowKey struct{ job, replica string }

// collector tallies the replicas' records as they arrive.
type collector struct {
	replicas   int
	jobs       []wire.Job
	firstReady time.Time
	rows       map[rowKey]*Row
	ticks      map[rowKey]map[time.Time]bool
	events     []wire.Record
	// missed holds, per job and replica, the ranges of ticks the replica
	// reported missed (wire.Missed).
	missed map[rowKey][][2]time.Time
	names  map[string]bool // replicas that reported ready
}

func newCollector(replicas int) *collector {
	return &collector{replicas: replicas, rows: map[rowKey]*Row{}, ticks: map[rowKey]map[time.Time]bool{}, missed: map[rowKey][][2]time.Time{}, names: map[string]bool{}}
}

func (c *collector) add(replica string, r wire.Record) {
	switch r.Msg {
	case wire.MsgReady:
		c.names[replica] = true
		if c.jobs == nil {
			c.jobs = r.Jobs
		}
		if c.firstReady.IsZero() || r.Time.Before(c.firstReady) {
			c.firstReady = r.Time
		}
		return
	case wire.MsgEvent:
	default:
		return
	}
	r.Replica = replica
	r.Tick, r.Time = r.Tick.UTC(), r.Time.UTC() // map keys: one location
	if r.Outcome == wire.Missed {
		k := rowKey{r.Job, replica}
		c.missed[k] = append(c.missed[k], [2]time.Time{r.Tick, r.Last.UTC()})
		return
	}
	c.events = append(c.events, r)
	k := rowKey{r.Job, replica}
	row := c.rows[k]
	if row == nil {
		row = &Row{Job: r.Job, Replica: replica}
		c.rows[k] = row
		c.ticks[k] = map[time.Time]bool{}
	}
	if !c.ticks[k][r.Tick] {
		c.ticks[k][r.Tick] = true
		row.Ticks++
	}
	switch r.Outcome {
	case wire.Ran:
		row.Runs++
	case wire.Skipped:
		row.Skips++
	case wire.Rejected:
		row.Rejected++
	case wire.Batch:
		row.Runs += r.Synced
		row.Skips += r.Held + r.Deduped
		row.RateLimited += r.Limited
	case wire.LockLost:
		row.LockLost++
	case wire.Failed, wire.Duplicate:
		row.Failed++
	}
}

// allMissed reports whether every replica reported tick t of job missed
// (wire.Missed): it passed while all of them stood still, so none could
// run it.
func (c *collector) allMissed(job string, t time.Time) bool {
	for name := range c.names {
		in := false
		for _, r := range c.missed[rowKey{job, name}] {
			if !t.Before(r[0]) && !t.After(r[1]) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return len(c.names) > 0
}

// expectedTicks lists the ticks of j in [from, to].
func expectedTicks(j wire.Job, from, to time.Time) []time.Time {
	if j.Every <= 0 {
		return nil
	}
	// Ticks are the Unix epoch + offset + k*every, as the scheduler
	// computes them; the first is the smallest not before from.
	every, off := int64(j.Every), int64(j.Offset)
	n := from.UnixNano() - off
	k := n / every
	if k*every < n {
		k++
	}
	var ticks []time.Time
	for t := time.Unix(0, k*every+off).UTC(); !t.After(to); t = t.Add(j.Every) {
		ticks = append(ticks, t)
	}
	return ticks
}

// tally builds the summary from the collected events, the witness rows
// (job → tick → runs) and the inventory row.
func tally(c *collector, from, to time.Time, witness map[string]map[time.Time]int, stock, lastFence int64, pauseWanted bool) *Summary {
	s := &Summary{Replicas: c.replicas, From: from, To: to, StockStart: stockStart, StockEnd: stock, LastFence: lastFence}

	// Rows, in job order, replicas in order, then the job's total.
	for _, j := range c.jobs {
		total := Row{Job: j.Name, Replica: "all"}
		allTicks := map[time.Time]bool{}
		var reps []string
		for k := range c.rows {
			if k.job == j.Name {
				reps = append(reps, k.replica)
			}
		}
		slices.Sort(reps)
		for _, rep := range reps {
			r := *c.rows[rowKey{j.Name, rep}]
			s.Rows = append(s.Rows, r)
			for t := range c.ticks[rowKey{j.Name, rep}] {
				allTicks[t] = true
			}
			total.Runs += r.Runs
			total.Skips += r.Skips
			total.Rejected += r.Rejected
			total.RateLimited += r.RateLimited
			total.LockLost += r.LockLost
			total.Failed += r.Failed
		}
		total.Ticks = len(allTicks)
		s.Rows = append(s.Rows, total)
	}

	// What the logs say: how many times each tick was started.
	startsByTick := map[string]map[time.Time]int{}
	duplicates := map[string]int{}
	var maxApplied int64
	for _, e := range c.events {
		switch e.Outcome {
		case wire.Started:
			if startsByTick[e.Job] == nil {
				startsByTick[e.Job] = map[time.Time]int{}
			}
			startsByTick[e.Job][e.Tick]++
		case wire.Duplicate:
			duplicates[e.Job]++
		case wire.Batch:
			s.Synced += e.Synced
			s.SyncDedup += e.Deduped
			s.RateLimit += e.Limited
		case wire.Paused:
			s.Frozen = fmt.Sprintf("%s froze at the inventory tick %s holding token %d", e.Replica, e.Tick.Local().Format("15:04:05"), e.Token)
		}
		if e.Outcome == wire.Rejected {
			s.Rejected++
		}
		if e.Job == "inventory" && e.Outcome == wire.Ran {
			s.Applied++
			maxApplied = max(maxApplied, e.Token)
		}
	}

	for _, j := range c.jobs {
		if !j.Locked {
			continue
		}
		ch := Check{Job: j.Name, Duplicates: duplicates[j.Name]}
		for _, t := range expectedTicks(j, from, to) {
			ch.Expected++
			switch {
			case witness[j.Name][t] == 1:
				ch.Once++
			case c.allMissed(j.Name, t):
				ch.Stalled = append(ch.Stalled, t)
			default:
				ch.Missing = append(ch.Missing, t)
			}
			if startsByTick[j.Name][t] == 1 || c.allMissed(j.Name, t) {
				ch.LogRuns++
			}
		}
		s.Checks = append(s.Checks, ch)
		if len(ch.Missing) > 0 {
			s.Failures = append(s.Failures, fmt.Sprintf("%s: %d of %d ticks in the window did not run: %s", j.Name, len(ch.Missing), ch.Expected, fmtTicks(ch.Missing)))
		}
		if len(ch.Stalled) > 0 && ch.Once == 0 {
			s.Failures = append(s.Failures, fmt.Sprintf("%s: every tick passed while the machine stood still; nothing to judge", j.Name))
		}
		if ch.Duplicates > 0 {
			s.Failures = append(s.Failures, fmt.Sprintf("%s: %d ticks ran a second time (witness conflict)", j.Name, ch.Duplicates))
		}
		if ch.LogRuns != ch.Expected {
			s.Failures = append(s.Failures, fmt.Sprintf("%s: the logs show %d of %d ticks started by exactly one replica", j.Name, ch.LogRuns, ch.Expected))
		}
		if ch.Expected == 0 {
			s.Failures = append(s.Failures, j.Name+": no tick in the window")
		}
	}
	if want := int64(stockStart - s.Applied); stock != want {
		s.Failures = append(s.Failures, fmt.Sprintf("inventory: stock is %d, but %d sales were applied from %d (want %d)", stock, s.Applied, stockStart, want))
	}
	if s.Applied > 0 && lastFence != maxApplied {
		s.Failures = append(s.Failures, fmt.Sprintf("inventory: last_fence %d is not the largest applied token %d", lastFence, maxApplied))
	}
	if pauseWanted && s.Rejected == 0 {
		s.Failures = append(s.Failures, "fencing: no stale write was shown rejected (did a replica freeze? see the log)")
	}
	return s
}

func fmtTicks(ts []time.Time) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.Local().Format("15:04:05.0"))
	}
	return strings.Join(parts, " ")
}

// verify reads the witness and inventory tables and builds the summary.
func verify(ctx context.Context, cfg Config, runID string, c *collector, stopAt time.Time) (*Summary, error) {
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	schema := "cronapp_" + runID
	q := func(t string) string { return pgx.Identifier{schema, t}.Sanitize() }

	// Ticks count from just after the first replica was ready (its
	// scheduler then fires every later tick) to a little before SIGTERM
	// (every earlier tick has fired; Shutdown lets it finish).
	from := c.firstReady.Add(100 * time.Millisecond)
	to := stopAt.Add(-300 * time.Millisecond)

	witness := map[string]map[time.Time]int{}
	var stock, lastFence int64
	if !c.firstReady.IsZero() {
		rows, err := pool.Query(ctx, "SELECT job, tick, count(*) FROM "+q("witness")+" GROUP BY job, tick")
		if err != nil {
			return nil, fmt.Errorf("read witness table: %w", err)
		}
		for rows.Next() {
			var job string
			var tick time.Time
			var n int
			if err := rows.Scan(&job, &tick, &n); err != nil {
				rows.Close()
				return nil, err
			}
			if witness[job] == nil {
				witness[job] = map[time.Time]int{}
			}
			witness[job][tick.UTC()] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		var lf *int64
		if err := pool.QueryRow(ctx, "SELECT stock, last_fence FROM "+q("inventory")+" WHERE product_id = 1").Scan(&stock, &lf); err != nil {
			return nil, fmt.Errorf("read inventory: %w", err)
		}
		if lf != nil {
			lastFence = *lf
		}
	}
	s := tally(c, from, to, normalise(witness), stock, lastFence, cfg.PauseAfter > 0)
	s.RunID = runID
	return s, nil
}

// normalise keys witness ticks by their UTC instant, as the events carry
// them.
func normalise(w map[string]map[time.Time]int) map[string]map[time.Time]int {
	out := make(map[string]map[time.Time]int, len(w))
	for job, m := range w {
		out[job] = make(map[time.Time]int, len(m))
		for t, n := range m {
			out[job][t.UTC().Round(0)] += n
		}
	}
	return out
}

// cleanup drops the run's schema and deletes its Redis keys.
func cleanup(ctx context.Context, cfg Config, runID string) error {
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{"cronapp_" + runID}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema: %w", err)
	}
	opt, err := goredis.ParseURL(cfg.RedisURL)
	if err != nil {
		return err
	}
	rdb := goredis.NewClient(opt)
	defer rdb.Close()
	iter := rdb.Scan(ctx, 0, "cronapp:"+runID+":*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan keys: %w", err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := rdb.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("delete keys: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}

// Print writes the summary table and the checks.
func (s *Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "\nsummary of run %s (%d replicas)\n", s.RunID, s.Replicas)
	const head = "%-14s %-10s %6s %5s %6s %18s %13s %10s %7s\n"
	const row = "%-14s %-10s %6d %5d %6d %18d %13d %10d %7d\n"
	fmt.Fprintf(w, head, "job", "replica", "ticks", "runs", "skips", "fenced rejections", "rate-limited", "lock lost", "failed")
	prev := ""
	for _, r := range s.Rows {
		job := r.Job
		if job == prev {
			job = ""
		}
		prev = r.Job
		fmt.Fprintf(w, row, job, r.Replica, r.Ticks, r.Runs, r.Skips, r.Rejected, r.RateLimited, r.LockLost, r.Failed)
	}
	fmt.Fprintln(w, "(customer-sync: runs = customers synced, skips = customers another replica held)")

	fmt.Fprintf(w, "\nexactly once, from the witness table UNIQUE(job, tick), ticks %s to %s:\n",
		s.From.Local().Format("15:04:05.000"), s.To.Local().Format("15:04:05.000"))
	for _, c := range s.Checks {
		mark := "ok"
		if len(c.Missing) > 0 || c.Duplicates > 0 || c.LogRuns != c.Expected || c.Expected == 0 {
			mark = "FAILED"
		}
		fmt.Fprintf(w, "  %-14s %d/%d ticks ran exactly once, %d second runs  %s\n", c.Job, c.Once, c.Expected, c.Duplicates, mark)
		if len(c.Stalled) > 0 {
			fmt.Fprintf(w, "  %-14s %d ticks passed while every replica stood still (machine paused or clock stepped; each reported them missed): %s\n", "", len(c.Stalled), fmtTicks(c.Stalled))
		}
	}
	fmt.Fprintf(w, "  %-14s %d syncs, at most once per customer and tick (%d stopped by the idempotency key)\n", "customer-sync", s.Synced, s.SyncDedup)
	if s.Frozen != "" {
		fmt.Fprintf(w, "fencing:    %s; %d stale write(s) refused by the last_fence guard\n", s.Frozen, s.Rejected)
	} else {
		fmt.Fprintf(w, "fencing:    no replica froze; %d stale write(s) refused\n", s.Rejected)
	}
	fmt.Fprintf(w, "inventory:  stock %d -> %d after %d applied sales; last_fence %d\n", s.StockStart, s.StockEnd, s.Applied, s.LastFence)
	fmt.Fprintf(w, "rate limit: %d third-party calls refused by the shared token bucket (state in PostgreSQL)\n", s.RateLimit)
	if s.Pass {
		fmt.Fprintln(w, "PASS: every tick of every locked job ran exactly once; no stale write landed")
		return
	}
	for _, f := range s.Failures {
		fmt.Fprintln(w, "FAIL:", f)
	}
}
