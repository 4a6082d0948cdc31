package scheduler

import (
	"container/heap"
	"context"
	"errors"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// due is one job's tick that the timer loop found due.
type due struct {
	j    *Job
	tick time.Time
}

// nextWait is how long the loop sleeps from now: until the earliest tick,
// at most maxWait, or -1 (no timer) when no job has a next tick. now must
// be read after the due jobs were dispatched, so that dispatching a large
// batch does not make the next tick late by its own duration. s.mu is
// held.
func (s *Scheduler) nextWait(now time.Time) time.Duration {
	if len(s.queue) == 0 {
		return -1
	}
	// Ticks are wall-clock times but timers run on the monotonic clock:
	// wake at least every maxWait to notice a wall-clock step (NTP, VM
	// resume) in time.
	return max(0, min(s.queue[0].nextTick.Sub(now), maxWait))
}

// batchAcquire is lockprovider.BatchAcquirer.AcquireBatch, or
// BatchLedger.AcquireRunBatch with the run's flags bound.
type batchAcquire func(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error)

// batcher returns the provider's batch claim, or nil when it has none: then
// every job claims on its own. With the ledger on, only a provider that
// opens run records in the batch itself (BatchLedger) batches, so that a
// batch claim records its runs in the same round trip as a single one.
func (s *Scheduler) batcher() batchAcquire {
	if s.ledger() != nil {
		bl, ok := s.provider.(lockprovider.BatchLedger)
		if !ok {
			return nil
		}
		run := lockprovider.RunStart{Retention: s.cfg.LedgerRetention}
		return func(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
			return bl.AcquireRunBatch(ctx, ps, run)
		}
	}
	if ba, ok := s.provider.(lockprovider.BatchAcquirer); ok {
		return ba.AcquireBatch
	}
	return nil
}

// fire pops the jobs due at now off the queue, moves each to its next
// tick and starts it, and returns how many were due. The locked ones
// claim their ticks together when the provider can batch: each chunk of
// lockprovider.MaxBatch is handed to a goroutine of its own as soon as it
// is full, so the first claims are on their way while later jobs are
// still being collected, and the loop returns to its timer at once.
// s.mu is held, so that Shutdown cannot start waiting on s.wg between
// these Add calls.
func (s *Scheduler) fire(now time.Time) int {
	acquire := s.batcher()
	var claims []due
	batches, n := 0, 0
	for len(s.queue) > 0 && !s.queue[0].nextTick.After(now) {
		j := s.queue[0]
		tick := j.nextTick
		if j.sched.Next(tick).Before(now) {
			// Several ticks passed while this process could not run
			// (a pause, a suspended VM, a wall-clock step): run only
			// the latest, which other replicas may be running too,
			// and say which were skipped.
			latest := j.sched.Prev(now)
			s.wg.Add(1)
			go s.skipMissed(j, &MissedError{First: tick, Last: j.sched.Prev(latest.Add(-time.Nanosecond))})
			tick = latest
		}
		j.nextTick = j.sched.Next(now)
		if j.nextTick.IsZero() {
			heap.Pop(&s.queue)
		} else {
			heap.Fix(&s.queue, 0)
		}
		n++
		if acquire == nil || !j.locked || j.ctl.jitter > 0 { // a jittered claim waits for its own instant
			s.wg.Add(1)
			go s.execute(j, tick, false)
			continue
		}
		if claims == nil {
			claims = make([]due, 0, lockprovider.MaxBatch)
		}
		claims = append(claims, due{j, tick})
		if len(claims) == lockprovider.MaxBatch {
			s.wg.Add(1)
			go s.claimBatch(acquire, claims, s.releases.claiming())
			claims, batches = nil, batches+1
		}
	}
	switch {
	case len(claims) == 1 && batches == 0:
		// One claim gains nothing from a batch: the single acquire.
		s.wg.Add(1)
		go s.execute(claims[0].j, claims[0].tick, false)
	case len(claims) > 0:
		s.wg.Add(1)
		go s.claimBatch(acquire, claims, s.releases.claiming())
	}
	return n
}

// claimAnswer is a claim's answer: one item of a batch claim, or a single
// acquire's (see Scheduler.acquireAlone).
type claimAnswer struct {
	ctx   context.Context // of the tick's events, from its JobAttempt
	owner string
	sent  time.Time     // when the claim was sent: the trust window counts from it
	took  time.Duration // the call's duration
	grant batontype.Lease
	err   error
}

// params are the acquire parameters of j's lease for tick.
func (s *Scheduler) params(j *Job, owner string, tick time.Time, atLeastFor time.Duration) lockprovider.AcquireParams {
	return lockprovider.AcquireParams{
		Name:       j.name,
		Owner:      owner,
		LockedBy:   s.cfg.LockedBy,
		AtMostFor:  j.opts.atMostFor,
		AtLeastFor: atLeastFor,
		Tick:       tick,
	}
}

// claimBatch claims the ticks of chunk in one batch call, then handles each
// answer as a single claim's (skip, failure with the release of an unknown
// outcome, or the run) on the job's own goroutine. A job whose previous run
// is still going is left to execute, which skips it. The caller has done
// s.wg.Add(1).
func (s *Scheduler) claimBatch(acquire batchAcquire, chunk []due, answered func()) {
	defer s.wg.Done()
	defer answered() // in case of an early return
	ps := make([]lockprovider.AcquireParams, 0, len(chunk))
	ctxs := make([]context.Context, 0, len(chunk))
	claimed := chunk[:0]
	owners := lockprovider.NewOwners(len(chunk))
	for i, d := range chunk {
		if d.j.ctl.removed.Load() {
			continue
		}
		if d.j.Paused() || !d.j.running.CompareAndSwap(false, true) {
			s.wg.Add(1)
			go s.execute(d.j, d.tick, false) // reports the skip
			continue
		}
		ctxs = append(ctxs, s.emit(s.runCtx, observe.JobAttempt, &Event{Job: d.j.name, Name: d.j.name, Tick: d.tick}))
		ps = append(ps, s.params(d.j, owners[i], d.tick, d.j.opts.atLeastFor))
		claimed = append(claimed, d)
	}
	if len(ps) == 0 {
		return
	}
	sent := s.now()
	ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.CallTimeout)
	res, err := acquire(ctx, ps)
	cancel()
	answered()
	took := s.now().Sub(sent)
	// One allocation for the chunk's answers, not one each; a run keeps
	// the chunk's alive until it ends (about 200 bytes an item).
	answers := make([]claimAnswer, len(claimed))
	for i, d := range claimed {
		pre := &answers[i]
		*pre = claimAnswer{ctx: ctxs[i], owner: ps[i].Owner, sent: sent, took: took, err: err}
		if err == nil {
			pre.grant, pre.err = res[i].Lease, res[i].Err
		}
		s.wg.Add(1)
		if errors.Is(pre.err, batontype.ErrNotAcquired) || errors.Is(pre.err, batontype.ErrStaleTick) {
			// A refusal only reports the skip: no goroutine needed.
			s.executeClaimed(d.j, d.tick, false, pre)
			continue
		}
		go s.executeClaimed(d.j, d.tick, false, pre)
	}
}
