package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/examples/cronapp/internal/wire"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/scheduler"
)

// Job names double as their lock names.
const (
	jobReport    = "daily-report"
	jobSync      = "customer-sync"
	jobInventory = "inventory"
	widgetID     = 1 // the inventory row the inventory job decrements
	apiKey       = "third-party-api"
)

// customers are the accounts customer-sync pushes to the third-party API.
var customers = []string{"c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09", "c10", "c11", "c12"}

// plan is one job's schedule and lock settings.
type plan struct {
	every, offset         time.Duration
	atMostFor, atLeastFor time.Duration
}

// plans returns the schedules: production ones, or the demo's, where every
// job ticks every 2 seconds at a different offset so their runs do not
// overlap (which keeps the demo's log readable).
func plans(demo bool) (report, sync, inventory plan, customerAtMostFor, customerAtLeast time.Duration) {
	if demo {
		return plan{every: 2 * time.Second, atMostFor: 1500 * time.Millisecond, atLeastFor: time.Second},
			plan{every: 2 * time.Second, offset: 500 * time.Millisecond},
			plan{every: 2 * time.Second, offset: time.Second, atMostFor: 1500 * time.Millisecond, atLeastFor: 500 * time.Millisecond},
			3 * time.Second, 1500 * time.Millisecond
	}
	return plan{every: 24 * time.Hour, offset: 2 * time.Hour, atMostFor: 30 * time.Minute, atLeastFor: 5 * time.Minute},
		plan{every: 15 * time.Minute},
		plan{every: time.Minute, atMostFor: 50 * time.Second, atLeastFor: 5 * time.Second},
		30 * time.Second, 10 * time.Minute
}

// register adds the three jobs to sched.
func (a *app) register(sched *scheduler.Scheduler) ([]*scheduler.Job, []wire.Job, error) {
	report, sync, inv, custAtMostFor, custAtLeast := plans(a.cfg.Demo)
	a.customerAtMostFor, a.customerAtLeast = custAtMostFor, custAtLeast

	var jobs []*scheduler.Job
	var infos []wire.Job
	add := func(name string, p plan, locked bool, describe string, fn scheduler.Func) error {
		b := sched.Every(p.every, scheduler.Offset(p.offset))
		if locked {
			b = b.Locked(name, scheduler.AtMostFor(p.atMostFor), scheduler.AtLeastFor(p.atLeastFor))
		} else {
			b = b.Name(name)
		}
		j, err := b.Do(fn)
		if err != nil {
			return err
		}
		jobs = append(jobs, j)
		infos = append(infos, wire.Job{Name: name, Every: p.every, Offset: p.offset, Locked: locked, Describe: describe})
		return nil
	}
	err := errors.Join(
		add(jobReport, report, true, fmt.Sprintf("Redis lock, AtMostFor %v, AtLeastFor %v", report.atMostFor, report.atLeastFor), a.dailyReport),
		add(jobSync, sync, false, fmt.Sprintf("every replica; per-customer Redis locks (TryAcquire, AtMostFor %v, AtLeastFor %v); token bucket 10 + 5/s in Postgres", custAtMostFor, custAtLeast), a.customerSync),
		add(jobInventory, inv, true, fmt.Sprintf("Redis lock, AtMostFor %v; fenced UPDATE in Postgres (last_fence)", inv.atMostFor), a.inventory),
	)
	return jobs, infos, err
}

// hooks turn the scheduler's outcomes into job events.
func (a *app) hooks() scheduler.Hooks {
	return scheduler.Hooks{
		Started: func(e scheduler.Event) {
			if e.Token != 0 { // locked jobs only: unlocked ones start everywhere
				a.event(slog.LevelInfo, e.Job, e.Tick, wire.Started, "token", e.Token)
			}
		},
		Skipped: func(e scheduler.Event) {
			if missed, ok := errors.AsType[*scheduler.MissedError](e.Err); ok {
				a.event(slog.LevelWarn, e.Job, e.Tick, wire.Missed, "last", missed.Last,
					"detail", "ticks passed while this replica could not fire them")
				return
			}
			why := e.Err.Error()
			switch {
			case errors.Is(e.Err, batontype.ErrNotAcquired):
				why = "lock held by another replica"
			case errors.Is(e.Err, batontype.ErrStaleTick):
				why = "tick already ran on another replica"
			case errors.Is(e.Err, scheduler.ErrStillRunning):
				why = "previous run still going here"
			}
			a.event(slog.LevelInfo, e.Job, e.Tick, wire.Skipped, "detail", why)
		},
		LockLost: func(e scheduler.Event) {
			a.event(slog.LevelWarn, e.Job, e.Tick, wire.LockLost, "token", e.Token,
				"detail", "lease ended while the job ran; its context is cancelled")
		},
		Failed: func(e scheduler.Event) {
			out := wire.Failed
			if errors.Is(e.Err, errDuplicate) {
				out = wire.Duplicate
			}
			a.event(slog.LevelError, e.Job, e.Tick, out, "token", e.Token, "err", e.Err.Error())
		},
		Logger: a.log,
	}
}

// event logs one job event (see package wire).
func (a *app) event(level slog.Level, job string, tick time.Time, outcome string, attrs ...any) {
	a.log.Log(context.Background(), level, wire.MsgEvent,
		append([]any{"job", job, "tick", tick, "outcome", outcome}, attrs...)...)
}

// dailyReport builds the report: exactly one replica per tick.
func (a *app) dailyReport(ctx context.Context, run scheduler.Run) error {
	if err := a.witness(ctx, run.Job, run.Tick, run.Token); err != nil {
		return err
	}
	var syncs, stock int64
	err := a.pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+a.t.witness+" WHERE job LIKE 'customer-sync:%'),"+
		" (SELECT stock FROM "+a.t.inventory+" WHERE product_id = $1)", widgetID).Scan(&syncs, &stock)
	if err != nil {
		return fmt.Errorf("report query: %w", err)
	}
	if err := sleep(ctx, time.Duration(100+rand.IntN(200))*time.Millisecond); err != nil { // "rendering"
		return err
	}
	a.event(slog.LevelInfo, run.Job, run.Tick, wire.Ran, "token", run.Token,
		"detail", fmt.Sprintf("report: %d customer syncs so far, widget stock %d", syncs, stock))
	return nil
}

// customerSync is a sync service for a third-party API, run by every
// replica at every tick: per customer, skip if another replica holds the
// customer's lock, respect the API's shared quota, push.
func (a *app) customerSync(ctx context.Context, run scheduler.Run) error {
	var synced, limited, failed []string
	held, deduped := 0, 0
	for _, i := range rand.Perm(len(customers)) {
		if ctx.Err() != nil {
			break
		}
		id := customers[i]
		switch out, err := a.syncCustomer(ctx, id, run.Tick); {
		case err != nil:
			failed = append(failed, id)
			a.log.Warn("customer sync failed", "customer", id, "tick", run.Tick, "err", err)
		case out == wire.Ran:
			synced = append(synced, id)
		case out == wire.Skipped:
			held++
		case out == wire.Duplicate:
			deduped++
		case out == wire.RateLimited:
			limited = append(limited, id)
		}
	}
	detail := "synced " + list(synced)
	if len(limited) > 0 {
		detail += "; rate-limited " + list(limited)
	}
	if len(failed) > 0 {
		detail += "; failed " + list(failed)
	}
	a.event(slog.LevelInfo, run.Job, run.Tick, wire.Batch, "synced", len(synced), "held", held,
		"limited", len(limited), "deduped", deduped, "detail", detail)
	return nil
}

func (a *app) syncCustomer(ctx context.Context, id string, tick time.Time) (string, error) {
	// 1. Avoid duplicate concurrent syncs of one customer: don't wait,
	// skip. AtLeastFor keeps the lock for the rest of the tick, so a
	// replica that reaches this customer later in the tick skips it too.
	lock, err := a.locker.TryAcquire(ctx, "sync:customer:"+id,
		&baton.AcquireOptions{AtMostFor: a.customerAtMostFor, AtLeastFor: a.customerAtLeast})
	if errors.Is(err, baton.ErrNotAcquired) {
		return wire.Skipped, nil
	}
	if err != nil {
		return "", err
	}
	defer func() {
		if err := lock.Release(ctx); err != nil {
			a.log.Warn("customer lock release", "customer", id, "err", err)
		}
	}()
	lctx := lock.Context() // cancelled if the lease is lost

	// 2. Respect the third-party API's quota, shared by every replica.
	res, err := a.limiter.Allow(lctx, apiKey)
	if err != nil {
		return "", fmt.Errorf("rate limiter: %w", err)
	}
	if !res.Allowed {
		return wire.RateLimited, nil
	}
	// 3. The lock makes a second sync in one tick unlikely; an idempotency
	// key in the database makes it impossible (a lock narrows the window,
	// a unique constraint closes it).
	if err := a.witness(lctx, "customer-sync:"+id, tick, lock.Token()); errors.Is(err, errDuplicate) {
		return wire.Duplicate, nil
	} else if err != nil {
		return "", err
	}
	if err := a.api.pushCustomerData(lctx, id); err != nil {
		return "", err
	}
	return wire.Ran, nil
}

// inventory sells one widget per tick: exactly one replica per tick, and
// the write carries the lock's fencing token.
func (a *app) inventory(ctx context.Context, run scheduler.Run) error {
	if err := a.witness(ctx, run.Job, run.Tick, run.Token); err != nil {
		return err
	}
	pause, err := a.claimPause(ctx, run)
	if err != nil {
		return err
	}
	// The lock's context says whether to start the write: once it is
	// cancelled (the trust window ended), don't.
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if pause {
		// Demo: the process freezes here, between the check above and
		// the write below, as a long GC pause or a suspended VM would.
		// Nothing in the process can notice: the lease expires, another
		// replica takes the next tick and writes with a newer token.
		a.freeze(run)
	}
	// Whether the write lands is the fence's decision, not the context's:
	// a write already under way when the lease was lost cannot be recalled
	// (cancelling a statement leaves its outcome unknown), so it runs to a
	// definite answer under its own deadline. The deadline context keeps
	// the job context's values, so the guard still checks the lease first.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = a.guard.Exec(wctx, a.pool, run.Token, widgetID, "stock = stock - $1", 1)
	if pause && errors.Is(err, scheduler.ErrLockLost) {
		// The guard's lease check saw the ended trust window and refused
		// before sending. A pause that strikes after that check, with
		// the statement already on its way, is not seen by this process:
		// the demo sends the write as such a process would (with a
		// context that carries no lock) to show the last_fence guard in
		// PostgreSQL refusing it.
		a.event(slog.LevelWarn, run.Job, run.Tick, wire.Resumed, "token", run.Token,
			"detail", "lease check refused the write before sending ("+err.Error()+"); sending it anyway, as a write already in flight would be")
		bctx, bcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer bcancel()
		err = a.guard.Exec(bctx, a.pool, run.Token, widgetID, "stock = stock - $1", 1)
	}
	switch {
	case errors.Is(err, fence.ErrStaleToken):
		a.event(slog.LevelWarn, run.Job, run.Tick, wire.Rejected, "token", run.Token,
			"detail", "stale write refused by last_fence guard: "+err.Error())
		return nil
	case err != nil:
		return err
	}
	// The sale is made; the stock is read back only for the log.
	stock := "unknown"
	var n int64
	if err := a.pool.QueryRow(wctx, "SELECT stock FROM "+a.t.inventory+" WHERE product_id = $1", widgetID).Scan(&n); err == nil {
		stock = fmt.Sprint(n)
	}
	a.event(slog.LevelInfo, run.Job, run.Tick, wire.Ran, "token", run.Token,
		"detail", fmt.Sprintf("sold 1 widget, stock %s, last_fence %d", stock, run.Token))
	return nil
}

// claimPause reports whether this run is the demo's frozen one: the first
// inventory run, on any replica, at least PauseAfter after this replica
// started. The control row makes it happen once per run.
func (a *app) claimPause(ctx context.Context, run scheduler.Run) (bool, error) {
	if a.cfg.PauseAfter <= 0 || a.paused.Load() || time.Since(a.start) < a.cfg.PauseAfter {
		return false, nil
	}
	tag, err := a.pool.Exec(ctx, "UPDATE "+a.t.control+" SET paused_by = $1, paused_tick = $2 WHERE id = 1 AND paused_by IS NULL",
		a.cfg.Replica, run.Tick)
	if err != nil {
		return false, fmt.Errorf("demo pause claim: %w", err)
	}
	a.paused.Store(true) // claimed or not, someone has paused
	return tag.RowsAffected() == 1, nil
}

// freeze stops this replica for PauseFor while it holds run's token.
func (a *app) freeze(run scheduler.Run) {
	how := "sleeping in the job"
	if a.cfg.PauseStop {
		how = "SIGSTOP of the whole process; the runner sends SIGCONT"
	}
	a.event(slog.LevelWarn, run.Job, run.Tick, wire.Paused, "token", run.Token, "pid", os.Getpid(),
		"pause_for", a.cfg.PauseFor,
		"detail", fmt.Sprintf("freezing for %v with token %d, past AtMostFor (%s)", a.cfg.PauseFor, run.Token, how))
	began := time.Now()
	if !a.cfg.PauseStop || !stopSelf(2*a.cfg.PauseFor+5*time.Second) {
		time.Sleep(a.cfg.PauseFor)
	}
	a.event(slog.LevelWarn, run.Job, run.Tick, wire.Resumed, "token", run.Token,
		"detail", fmt.Sprintf("frozen for %v; still holding token %d, now writing", time.Since(began).Round(time.Millisecond), run.Token))
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, " ")
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
