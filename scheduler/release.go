package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// releases sends the releases of runs that end together in batch calls
// (lockprovider.BatchReleaser), the way a database commits a group: a
// release finding no call in flight is sent at once, alone, as
// Provider.Release; releases arriving while a call is in flight queue, and
// the first of them sends the whole queue in one batch when that call
// returns. So a lone release costs what it did, and the 10,000 releases of
// one tick's jobs cost tens of round trips instead of 10,000, which the
// backend and this process would otherwise spend their CPU on while the
// tick's later claims wait. Each release still gets its own answer.
//
// While batch claims are in flight (a tick of many jobs), a release waits
// for them to be answered before it is sent, at most maxDefer: the
// claims start runs, the releases only end them, and on a busy backend
// each release sent first would delay the tick's last claims. The
// releases queued meanwhile then go together.
//
// With the ledger on, each release carries its run's end, recorded in the
// same call (ReleaseRun alone, ReleaseRunBatch together).
//
// Each call is bounded by timeout (the leases' ReleaseTimeout) from its
// send, as a lease bounds the release it makes itself (see
// lease.Params.Release).
type releases struct {
	single   func(context.Context, lockprovider.ReleaseParams, *lockprovider.RunEnd) error
	batch    func(context.Context, []lockprovider.ReleaseParams, []lockprovider.RunEnd) ([]error, error)
	maxDefer time.Duration
	timeout  time.Duration

	mu     sync.Mutex
	busy   bool              // a call is in flight; its sender will hand over
	queue  []*pendingRelease // waiting for the next call, oldest first
	claims int               // batch claims in flight
	idle   chan struct{}     // closed when claims drops to 0
}

// pendingRelease is one release waiting in the queue.
type pendingRelease struct {
	p    lockprovider.ReleaseParams
	end  *lockprovider.RunEnd // with the ledger
	err  error
	done bool          // err is the answer; set before wake is closed
	wake chan struct{} // closed when answered, or to hand the next call over
}

// newReleases returns the coalescer for p, with the runs' ends when ledger
// is set, or nil when p cannot release in batches (lockprovider.
// BatchReleaser; with the ledger BatchLedger). A release waits for batch
// claims in flight at most maxDefer; each call is bounded by timeout.
func newReleases(p lockprovider.Provider, ledger bool, maxDefer, timeout time.Duration) *releases {
	r := &releases{maxDefer: maxDefer, timeout: timeout}
	if ledger {
		led, ok1 := p.(lockprovider.Ledger)
		bl, ok2 := p.(lockprovider.BatchLedger)
		if !ok1 || !ok2 {
			return nil
		}
		r.single = func(ctx context.Context, rp lockprovider.ReleaseParams, end *lockprovider.RunEnd) error {
			return led.ReleaseRun(ctx, rp, *end)
		}
		r.batch = bl.ReleaseRunBatch
		return r
	}
	br, ok := p.(lockprovider.BatchReleaser)
	if !ok {
		return nil
	}
	r.single = func(ctx context.Context, rp lockprovider.ReleaseParams, _ *lockprovider.RunEnd) error {
		return p.Release(ctx, rp)
	}
	r.batch = func(ctx context.Context, ps []lockprovider.ReleaseParams, _ []lockprovider.RunEnd) ([]error, error) {
		return br.ReleaseBatch(ctx, ps)
	}
	return r
}

// claiming records a batch claim in flight; the caller calls the returned
// function, once or more, when the claim is answered. A nil r does
// nothing.
func (r *releases) claiming() (answered func()) {
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	if r.claims == 0 {
		r.idle = make(chan struct{})
	}
	r.claims++
	r.mu.Unlock()
	return sync.OnceFunc(func() {
		r.mu.Lock()
		if r.claims--; r.claims == 0 {
			close(r.idle)
		}
		r.mu.Unlock()
	})
}

// deferToClaims waits until no batch claim is in flight, at most
// maxDefer.
func (r *releases) deferToClaims() {
	r.mu.Lock()
	n, idle := r.claims, r.idle
	r.mu.Unlock()
	if n == 0 {
		return
	}
	t := time.NewTimer(r.maxDefer)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// release is Provider.Release of p, or with the ledger ReleaseRun of p and
// end, sent alone or with others (see releases). The call that carries it
// has the values of the context of the release that sends it, and is
// bounded by r.timeout; ctx must not be cancelled before (a lease passes
// its releases a detached one).
func (r *releases) release(ctx context.Context, p lockprovider.ReleaseParams, end *lockprovider.RunEnd) error {
	me := &pendingRelease{p: p, end: end, wake: make(chan struct{})}
	r.mu.Lock()
	r.queue = append(r.queue, me)
	if r.busy {
		r.mu.Unlock()
		<-me.wake
		if me.done {
			return me.err
		}
		// Handed over: send the queue, which starts with this release.
	} else {
		r.busy = true
		r.mu.Unlock()
	}
	r.deferToClaims()
	r.mu.Lock()
	n := r.take()
	group := r.queue[:n:n]
	r.queue = r.queue[n:]
	r.mu.Unlock()

	r.send(ctx, group)

	r.mu.Lock()
	if len(r.queue) > 0 {
		close(r.queue[0].wake) // the next call is its sender's
	} else {
		r.busy, r.queue = false, nil
	}
	r.mu.Unlock()
	for _, q := range group[1:] {
		close(q.wake)
	}
	return me.err
}

// take returns how many of the queue's releases the next call carries: up
// to MaxBatch, stopping before a name already in it, which a batch would
// refuse as a repeat (one run's release retried while the first try
// waits, say). r.mu is held.
func (r *releases) take() int {
	if len(r.queue) == 1 {
		return 1
	}
	seen := make(map[string]bool, min(len(r.queue), lockprovider.MaxBatch))
	for i, q := range r.queue[:min(len(r.queue), lockprovider.MaxBatch)] {
		if seen[q.p.Name] {
			return i
		}
		seen[q.p.Name] = true
	}
	return min(len(r.queue), lockprovider.MaxBatch)
}

// send makes one call for group and records each answer.
func (r *releases) send(ctx context.Context, group []*pendingRelease) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if len(group) == 1 {
		group[0].err, group[0].done = r.single(ctx, group[0].p, group[0].end), true
		return
	}
	ps := make([]lockprovider.ReleaseParams, len(group))
	var ends []lockprovider.RunEnd
	if group[0].end != nil {
		ends = make([]lockprovider.RunEnd, len(group))
	}
	for i, q := range group {
		ps[i] = q.p
		if ends != nil {
			ends[i] = *q.end
		}
	}
	errs, err := r.batch(ctx, ps, ends)
	if err == nil && len(errs) != len(ps) {
		err = fmt.Errorf("scheduler: release batch of %d answered %d results", len(ps), len(errs))
	}
	for i, q := range group {
		if err != nil {
			q.err = err
		} else {
			q.err = errs[i]
		}
		q.done = true
	}
}

// release returns the release call of a run's lease: with the ledger on,
// one that also records how the run ended (see runEnd), batched when the
// provider can; without it the batching one, or nil when the provider
// cannot batch (the lease then calls Provider.Release).
func (s *Scheduler) release(l *lease.Lease, res *runResult) func(context.Context, lockprovider.ReleaseParams) error {
	led := s.ledger()
	switch {
	case led != nil && s.releases != nil:
		return func(ctx context.Context, rp lockprovider.ReleaseParams) error {
			end := s.runEnd(l, res)
			return s.releases.release(ctx, rp, &end)
		}
	case led != nil:
		return func(ctx context.Context, rp lockprovider.ReleaseParams) error {
			ctx, cancel := context.WithTimeout(ctx, s.lease.ReleaseTimeout)
			defer cancel()
			return led.ReleaseRun(ctx, rp, s.runEnd(l, res))
		}
	case s.releases != nil:
		return func(ctx context.Context, rp lockprovider.ReleaseParams) error {
			return s.releases.release(ctx, rp, nil)
		}
	}
	return nil
}

// end releases the lease of j's run and reports whether the run held it to
// the end. A release that finds the lease no longer held, when the run had
// not learnt of a loss (a force-release, or a lease lost on the backend,
// that no extension or renewal noticed while the run went on), means the
// run was not protected to its end: it counts as a lost lock (the
// LockLost counter, JobLockLost with the release's error), and with the
// ledger on, the record that the release completed with the outcome the
// run knew is completed again as lock_lost. That costs one call more, on
// this path only. ev is the run's event as the claim left it.
func (s *Scheduler) end(j *Job, l *lease.Lease, ev Event, res *runResult) (held bool) {
	err := l.Release(s.runCtx) // logged by the lease; it lapses at expiry otherwise
	if !errors.Is(err, batontype.ErrLockLost) || errors.Is(l.Err(), batontype.ErrLockLost) {
		return true
	}
	j.lockLost.Add(1)
	ev.Err = err
	s.emit(res.ctx, observe.JobLockLost, &ev)
	if led := s.ledger(); led != nil {
		rec := s.runEnd(l, res)
		rec.Outcome, rec.Error = s.outcome(runResult{err: res.err, lost: true})
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.runCtx), s.lease.ReleaseTimeout)
		defer cancel()
		// The lease is gone, so the answer is ErrNotHeld; the record is
		// written whatever the release answers.
		if rerr := led.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: j.name, Owner: res.lease.Owner}, rec); rerr != nil && !errors.Is(rerr, batontype.ErrNotHeld) {
			s.cfg.Logger.WarnContext(s.runCtx, "scheduler: recording a run whose lease was gone at its release", "job", j.name, "token", ev.Token, "err", rerr)
		}
	}
	return false
}
