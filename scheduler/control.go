package scheduler

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Control of jobs at run time: manual runs (Trigger and the provider's
// run requests), pause and resume (on this instance and cluster-wide),
// removal, retries, jitter and timeouts of unlocked jobs.

// DefaultControlPoll is the interval of control-state reads when
// Config.ControlPoll is zero.
const DefaultControlPoll = 5 * time.Second

// Limits of the per-job options.
const (
	MaxRetries = 100 // Builder.Retry
)

// ErrPaused is the reason a tick is skipped while its job is paused, on
// this instance (Job.Pause) or cluster-wide (Scheduler.PauseCluster,
// baton jobs pause).
var ErrPaused = errors.New("scheduler: job paused")

// ErrTimeout is the cause of an unlocked job's context when its run
// outlived Builder.Timeout.
var ErrTimeout = errors.New("scheduler: run timed out")

// ErrUnknownJob is returned (inside a *ValidationError) by Trigger and
// Remove for a name that no job of this scheduler has.
var ErrUnknownJob = fmt.Errorf("%w: no such job", ErrInvalid)

// ErrControlNotSupported is returned (inside a *ValidationError) by
// PauseCluster and ResumeCluster when the provider does not implement
// lockprovider.Control, or Config.NoControl is set.
var ErrControlNotSupported = fmt.Errorf("%w: provider has no cluster-wide control (no lockprovider.Control)", ErrInvalid)

// jobOptions are the Builder's Retry, Jitter and Timeout.
type jobOptions struct {
	retries         int
	backoff, jitter time.Duration
	timeout         time.Duration
	err             error // the first invalid option
}

// jobControl is a job's control options and state.
type jobControl struct {
	jobOptions
	paused  atomic.Bool // Job.Pause on this instance
	removed atomic.Bool // Scheduler.Remove
}

// control is a run's control facts, for the ledger and the hooks.
type control struct {
	granted time.Time // manual runs: this instance's clock before the granting acquire
	manual  bool      // a manual run
	handoff bool      // a tick claimed after a manual run that held the lease at the tick
	note    string    // the ledger's text for a run that succeeded after retries
}

// atLeastFor is the minimum hold of the run's lease: none for manual runs,
// which have no tick for late replicas to run again.
func (c control) atLeastFor(j *Job) time.Duration {
	if c.manual {
		return 0
	}
	return j.opts.atLeastFor
}

// Retry calls the job function again, up to n more times, when it returns
// an error or panics, within the same run: the same tick, lease and
// fencing token. The first retry waits backoff, each later one twice the
// previous wait. For a locked job the lease is extended before each wait
// to cover the wait plus a full AtMostFor. Retries stop when the run's
// context ends (the lease was lost, Close, or Shutdown's deadline); a
// Shutdown waits for them like for any running job. 1 <= n <= MaxRetries;
// backoff may be zero.
func (b *Builder) Retry(n int, backoff time.Duration) *Builder {
	switch {
	case n < 1 || n > MaxRetries:
		b.ctl.fail(invalid(b.name, "Retry", strconv.Itoa(n), "must be between 1 and "+strconv.Itoa(MaxRetries), ErrInvalidOption, nil))
	case backoff < 0 || backoff > batontype.MaxDuration || n > 1 && backoff > batontype.MaxDuration>>(n-1):
		b.ctl.fail(invalid(b.name, "Retry", backoff.String(), "backoff must be non-negative and its last doubling at most "+batontype.MaxDuration.String(), ErrInvalidDuration, nil))
	default:
		b.ctl.retries, b.ctl.backoff = n, backoff
	}
	return b
}

// Jitter delays every scheduled run of the job by an amount in [0, d)
// derived from the job's name and the tick: the same on every replica, so
// they still contend for the same tick, and different across jobs, so
// jobs due at the same instant spread their starts. The run's Tick stays
// the scheduled time. Manual and catch-up runs are not delayed. d must be
// positive and, for Every schedules, shorter than the period. For cron
// schedules it is not checked: keep it shorter than the shortest gap
// between ticks. Otherwise a tick's delayed claim may come after the next
// tick's claim (whose delay was shorter), and that earlier tick is then
// skipped with ErrStaleTick on every replica: it does not run.
func (b *Builder) Jitter(d time.Duration) *Builder {
	limit := batontype.MaxDuration
	if e, ok := b.sched.(every); ok {
		limit = e.period - 1
	}
	if d <= 0 || d > limit {
		b.ctl.fail(invalid(b.name, "Jitter", d.String(), "must be positive and at most "+limit.String(), ErrInvalidDuration, nil))
		return b
	}
	b.ctl.jitter = d
	return b
}

// Timeout bounds each call of an unlocked job's function: its context is
// cancelled with cause ErrTimeout d after the call started. Locked jobs
// end at their AtMostFor instead, so Timeout with Locked is an
// ErrInvalidOption. d must be at least 1ms.
func (b *Builder) Timeout(d time.Duration) *Builder {
	if d < batontype.MinDuration || d > batontype.MaxDuration {
		b.ctl.fail(invalid(b.name, "Timeout", d.String(), "must be between "+batontype.MinDuration.String()+" and "+batontype.MaxDuration.String(), ErrInvalidDuration, nil))
		return b
	}
	b.ctl.timeout = d
	return b
}

func (o *jobOptions) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// check reports the first invalid option and copies the options to j.
func (o *jobOptions) check(b *Builder, j *Job) error {
	if o.err != nil {
		return withJob(b.name, o.err)
	}
	if o.timeout > 0 && b.locked {
		return invalid(b.name, "Timeout", o.timeout.String(), "applies to jobs without Locked; a locked job ends at its AtMostFor", ErrInvalidOption, nil)
	}
	j.ctl.jobOptions = *o
	return nil
}

// options lists the options for the registry.
func (o *jobOptions) options() []string {
	var out []string
	if o.retries > 0 {
		out = append(out, "retry="+strconv.Itoa(o.retries)+"/"+o.backoff.String())
	}
	if o.jitter > 0 {
		out = append(out, "jitter="+o.jitter.String())
	}
	if o.timeout > 0 {
		out = append(out, "timeout="+o.timeout.String())
	}
	return out
}

// JitterOf returns the delay Jitter(max) gives the run of job for tick:
// FNV-1a of the name and the tick's Unix nanoseconds, modulo max; 0 when
// max is not positive.
func JitterOf(job string, tick time.Time, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(job))
	_, _ = h.Write(binary.BigEndian.AppendUint64(nil, uint64(tick.UnixNano())))
	return time.Duration(h.Sum64() % uint64(max))
}

// Pause stops this instance from running the job's scheduled ticks (and
// catch-up) until Resume; they are skipped with ErrPaused. A run in
// progress is not interrupted, and manual runs still run. Other replicas
// are not affected: see Scheduler.PauseCluster.
func (j *Job) Pause() { j.ctl.paused.Store(true) }

// Resume undoes Pause.
func (j *Job) Resume() { j.ctl.paused.Store(false) }

// Paused reports whether the job is paused on this instance or, as last
// read from the provider, cluster-wide.
func (j *Job) Paused() bool { return j.ctl.paused.Load() || j.s.clusterPaused(j.name) }

// admit decides whether a tick of j goes on to its claim: not for a job
// removed meanwhile, nor for a paused one (reported as a skip). A
// scheduled tick of a job with Jitter waits for its delay first.
func (s *Scheduler) admit(j *Job, ev *Event) bool {
	if j.ctl.removed.Load() {
		return false
	}
	if d := j.ctl.jitter; d > 0 && !ev.CatchUp {
		wait := ev.Tick.Add(JitterOf(j.name, ev.Tick, d)).Sub(s.now())
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.stop:
				t.Stop()
				return false
			}
		}
		if j.ctl.removed.Load() {
			return false
		}
	}
	if !j.Paused() {
		return true
	}
	ev.Err, ev.Outcome = ErrPaused, observe.OutcomePaused
	j.skips.Add(1)
	s.cfg.Logger.DebugContext(s.runCtx, "scheduler: skipped tick: job paused", "job", j.name, "tick", ev.Tick,
		"here", j.ctl.paused.Load(), "cluster", s.clusterPaused(j.name))
	s.emit(s.runCtx, observe.JobSkipped, ev)
	return false
}

// attempts calls the job function once, and again as Retry allows,
// reporting every call to the hooks, and leaves in res what the ledger
// records: the last error, marked with its attempt when there were
// several, or for a success after failures a note of them.
func (s *Scheduler) attempts(ctx context.Context, j *Job, run Run, ev Event, res *runResult) {
	max := 1 + j.ctl.retries
	wait := j.ctl.backoff
	var last error // of the previous attempt
	for k := 1; ; k++ {
		run.Attempt, ev.Attempt = k, k
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if j.ctl.timeout > 0 {
			cctx, cancel = context.WithTimeoutCause(ctx, j.ctl.timeout, ErrTimeout)
		}
		err := s.call(cctx, j, run, ev)
		cancel()
		switch {
		case err == nil && k > 1:
			res.note = fmt.Sprintf("succeeded at attempt %d of %d; attempt %d failed: %v", k, max, k-1, last)
			res.err = nil
			return
		case err == nil:
			return
		case max > 1:
			res.err = fmt.Errorf("attempt %d of %d: %w", k, max, err)
		default:
			res.err = err
		}
		last = err
		if k == max || ctx.Err() != nil || !s.retryWait(ctx, j, run, wait) {
			return
		}
		wait *= 2
	}
}

// retryWait extends a locked run's lease to cover wait and a full
// AtMostFor, then waits; it reports whether to try again.
func (s *Scheduler) retryWait(ctx context.Context, j *Job, run Run, wait time.Duration) bool {
	if run.lease != nil {
		d := min(wait+j.opts.atMostFor, batontype.MaxDuration)
		if err := run.lease.Extend(ctx, d); err != nil {
			s.cfg.Logger.WarnContext(s.runCtx, "scheduler: cannot extend the lease for a retry; giving up", "job", j.name, "tick", run.Tick, "err", err)
			return false
		}
	}
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Remove unregisters the job named name: it stops ticking at once and
// leaves the registry at its next publication. A run in progress is not
// cancelled; it finishes and releases its lock, and Shutdown still waits
// for it. The name may be registered again afterwards. It returns a
// *ValidationError matching ErrUnknownJob for a name not registered, and
// ErrClosed after Shutdown or Close.
func (s *Scheduler) Remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return ErrClosed
	}
	j := s.jobs[name]
	if j == nil {
		return invalid(name, "Remove", name, "is not a registered job", ErrUnknownJob, nil)
	}
	delete(s.jobs, name)
	j.ctl.removed.Store(true)
	if j.index >= 0 {
		heap.Remove(&s.queue, j.index)
	}
	s.jobsChanged()
	return nil
}

// lookup returns the registered job named name.
func (s *Scheduler) lookup(name, field string) (*Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return nil, ErrClosed
	}
	if j := s.jobs[name]; j != nil {
		return j, nil
	}
	ve := invalid(name, field, name, "is not a registered job", ErrUnknownJob, nil)
	if name == "" {
		ve.Value = `""` // else the message names no job at all
	}
	return nil, ve
}

// track counts a goroutine that Shutdown and Close wait for, unless the
// scheduler is closed.
func (s *Scheduler) track() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return ErrClosed
	}
	s.wg.Add(1)
	return nil
}

// Trigger runs the job named name now, on this instance, as a manual run:
// exactly one run, whichever replica Trigger is called on. A locked job's
// manual run holds the job's lock (same name, same fencing-token sequence)
// but claims no tick, so it never takes the place of a scheduled tick:
// the provider's last tick is untouched, the lease has no AtLeastFor, and
// a tick that comes while the manual run holds the lock is run right after
// it, by this instance (see docs/semantics.md). When another run of the
// job holds the lock, or runs on this instance, Trigger waits for it to
// end, until ctx is done; a scheduled run that returned before its
// AtLeastFor bound holds the lock until that bound. It returns once the
// run has started (its outcome goes to the hooks and the ledger), a
// *ValidationError matching ErrUnknownJob for a name not registered here,
// ErrClosed once Shutdown or Close began, ctx's error, or the provider's
// error. Manual runs are not affected by Pause. Trigger works before Start too. For a job that
// only other instances register, store a run request instead
// (lockprovider.Control.RequestRun, or baton jobs run).
func (s *Scheduler) Trigger(ctx context.Context, name string) error {
	if ctx == nil {
		return ErrNilContext
	}
	j, err := s.lookup(name, "Trigger")
	if err != nil {
		return err
	}
	if err := s.track(); err != nil {
		return err
	}
	started := make(chan error, 1)
	go s.runManual(ctx, j, func(err error) { started <- err })
	return <-started
}

// handoffMargin bounds how long before a manual run's grant a scheduled
// tick may have fired and still had its claims refused by the manual
// lease (claims in flight); the call timeout bounds it too.
const handoffMargin = time.Second

// runManual runs j once as a manual run, telling started whether it
// started. The caller did s.track.
func (s *Scheduler) runManual(ctx context.Context, j *Job, started func(error)) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Manual: true}
	res := &runResult{control: control{manual: true}}
	l, err := s.manualClaim(ctx, j, &ev, res)
	started(err)
	if err != nil {
		if j.locked {
			ev.Err, ev.Outcome = err, observe.OutcomeError
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
				ev.Outcome = observe.OutcomeCanceled
			}
			s.emit(res.ctx, observe.JobDone, &ev)
		}
		return
	}
	if l == nil {
		ctx, cancel := context.WithCancelCause(s.runCtx)
		s.attempts(ctx, j, Run{Job: j.name, Manual: true}, ev, res)
		cancel(nil)
		j.running.Store(false)
		return
	}
	s.attempts(l.Context(), j, Run{Job: j.name, Token: ev.Token, Manual: true, lease: l}, ev, res)
	held := s.end(j, l, ev, res)
	j.running.Store(false)
	if s.obs != nil {
		ev.Err, ev.Outcome = res.err, s.runOutcome(res.err, l, held)
		s.emit(res.ctx, observe.JobDone, &ev)
	}
	// A tick whose claim came while the manual run held the lock was
	// refused on every replica (here as ErrStillRunning): run it now. Its
	// claim carries the tick, so it runs at most once (a tick that did run
	// elsewhere is refused quietly). A jittered tick is claimed at its
	// delay: one whose claim is still ahead makes it itself, so the tick
	// before it is the one that may have been refused.
	now := s.now()
	tick := j.sched.prev(now)
	claimedAt := func(t time.Time) time.Time { return t.Add(JitterOf(j.name, t, j.ctl.jitter)) }
	if !tick.IsZero() && claimedAt(tick).After(now) {
		tick = j.sched.prev(tick.Add(-time.Nanosecond))
	}
	if tick.IsZero() || claimedAt(tick).Before(res.granted.Add(-min(handoffMargin, s.cfg.CallTimeout))) {
		return
	}
	if s.track() != nil {
		return
	}
	s.executeHandoff(j, tick)
}

// executeHandoff is execute for the tick that a manual run held the lock
// through. The caller did s.track.
func (s *Scheduler) executeHandoff(j *Job, tick time.Time) {
	defer s.wg.Done()
	ev := Event{Job: j.name, Tick: tick}
	if !s.admit(j, &ev) || !j.running.CompareAndSwap(false, true) {
		return
	}
	defer j.running.Store(false)
	res := &runResult{control: control{handoff: true}}
	l := s.claim(j, tick, &ev, res, nil)
	if l == nil {
		s.emit(res.ctx, observe.JobDone, &ev)
		return
	}
	s.attempts(l.Context(), j, Run{Job: j.name, Tick: tick, Token: ev.Token, lease: l}, ev, res)
	held := s.end(j, l, ev, res)
	if s.obs != nil {
		ev.Err, ev.Outcome = res.err, s.runOutcome(res.err, l, held)
		s.emit(res.ctx, observe.JobDone, &ev)
	}
}

// manualClaim waits until this instance runs no run of j and, for a
// locked job, acquires j's lease without a tick. On success j.running is
// set and, for a locked job, the lease is returned (nil for an unlocked
// job). It polls with a backoff of 50ms doubling to 1s while another run
// holds the lock, and gives up when ctx is done or Shutdown begins.
func (s *Scheduler) manualClaim(ctx context.Context, j *Job, ev *Event, res *runResult) (*lease.Lease, error) {
	res.ctx = s.runCtx
	if j.locked {
		ev.Name = j.name
		res.ctx = s.emit(s.runCtx, observe.JobAttempt, ev)
	}
	backoff := 50 * time.Millisecond
	for {
		if j.running.CompareAndSwap(false, true) {
			if !j.locked {
				return nil, nil
			}
			l, err := s.manualAcquire(ctx, j, ev, res)
			if l != nil || err != nil {
				if err != nil {
					j.running.Store(false)
				}
				return l, err
			}
			j.running.Store(false)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-s.stop:
			t.Stop()
			return nil, ErrClosed
		}
		backoff = min(2*backoff, time.Second)
	}
}

// manualAcquire tries once to acquire j's lease for a manual run: the
// lease, or nil and no error when another run holds it.
func (s *Scheduler) manualAcquire(ctx context.Context, j *Job, ev *Event, res *runResult) (*lease.Lease, error) {
	owner := lockprovider.NewOwner()
	sent := s.now()
	res.granted = sent
	actx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	grant, err := s.acquire(actx, lockprovider.AcquireParams{
		Name: j.name, Owner: owner, LockedBy: s.cfg.LockedBy, AtMostFor: j.opts.atMostFor,
	}, res)
	cancel()
	switch {
	case err == nil:
		claimed := *ev
		claimed.Start, claimed.Duration = sent, s.now().Sub(sent)
		claimed.Token, claimed.Outcome = grant.Token, observe.OutcomeClaimed
		s.emit(res.ctx, observe.JobClaimed, &claimed)
		return s.hold(j, owner, &grant, sent, ev, res), nil
	case errors.Is(err, batontype.ErrNotAcquired):
		return nil, nil
	}
	if !batontype.Definite(err) {
		if rerr := lease.Abandon(s.runCtx, s.provider, j.name, owner, s.cfg.CallTimeout); rerr != nil {
			s.cfg.Logger.WarnContext(s.runCtx, "scheduler: release after a failed manual acquire; the lease lapses at its expiry", "job", j.name, "err", rerr)
		}
	}
	return nil, fmt.Errorf("scheduler: manual run of %q: acquire: %w", j.name, err)
}

// controller follows the provider's control state while the scheduler
// runs: cluster-wide pauses (cached for admit) and run requests (claimed
// and run as manual runs).
type controller struct {
	paused atomic.Pointer[map[string]struct{}] // as last read; nil before the first read

	mu   sync.Mutex
	stop context.CancelFunc // ends the follower and its calls
	done chan struct{}
	read chan struct{} // closed after the first read of the control state
}

// validateControl checks the control fields of c and fills their defaults.
func (c *Config) validateControl() error {
	switch {
	case c.ControlPoll == 0:
		c.ControlPoll = DefaultControlPoll
	case c.ControlPoll < 10*time.Millisecond || c.ControlPoll > batontype.MaxDuration:
		return invalid("", "ControlPoll", c.ControlPoll.String(), "must be between 10ms and "+batontype.MaxDuration.String(), ErrInvalidDuration, nil)
	}
	return nil
}

// controlProvider returns the provider's Control unless Config.NoControl.
func (s *Scheduler) controlProvider() lockprovider.Control {
	if s.cfg.NoControl {
		return nil
	}
	c, _ := s.provider.(lockprovider.Control)
	return c
}

// clusterPaused reports whether name was paused cluster-wide at the last
// read of the control state.
func (s *Scheduler) clusterPaused(name string) bool {
	m := s.control.paused.Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[name]
	return ok
}

// startControl starts following the control state. s.mu is held.
func (s *Scheduler) startControl() {
	ctl := s.controlProvider()
	if ctl == nil {
		return
	}
	c := &s.control
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithCancel(s.runCtx)
	c.stop, c.done, c.read = cancel, make(chan struct{}), make(chan struct{})
	go s.follow(ctx, ctl, c.done, c.read)
}

// controlRead waits until the control state was read once since Start (at
// once when it is not followed), or the scheduler's runs are cancelled.
// A catch-up waits for it: it is due at Start, before the follower's first
// read, and a job paused cluster-wide always looks as if it missed a tick.
func (s *Scheduler) controlRead() {
	c := &s.control
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	if read == nil {
		return
	}
	select {
	case <-read:
	case <-s.runCtx.Done():
	}
}

// stopControl stops following and waits for the follower to return.
func (s *Scheduler) stopControl() {
	c := &s.control
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.stop = nil
	c.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

// follow reads the control state at once, on every announcement and every
// ControlPoll.
func (s *Scheduler) follow(ctx context.Context, ctl lockprovider.Control, done, read chan<- struct{}) {
	defer close(done)
	ch := make(chan struct{}, 1)
	var unwatch func()
	defer func() {
		if unwatch != nil {
			unwatch()
		}
	}()
	t := time.NewTicker(s.cfg.ControlPoll)
	defer t.Stop()
	level := slog.LevelWarn // of the first failure to watch; later ones at debug
	for {
		if unwatch == nil {
			wctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
			var err error
			if unwatch, err = ctl.WatchControl(wctx, ch); err != nil && ctx.Err() == nil {
				unwatch = nil
				s.cfg.Logger.Log(ctx, level, "scheduler: cannot watch control changes; reading them every ControlPoll", "poll", s.cfg.ControlPoll, "err", err)
				level = slog.LevelDebug
			}
			cancel()
		}
		s.readControl(ctx, ctl)
		if read != nil {
			close(read)
			read = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-t.C:
		}
	}
}

// readControl reads the control state once: caches the paused jobs and
// claims the run requests for jobs registered here.
func (s *Scheduler) readControl(ctx context.Context, ctl lockprovider.Control) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	st, err := ctl.ControlState(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
			return // stopping
		}
		s.cfg.Logger.Warn("scheduler: cannot read the control state; keeping the last one", "err", err)
		return
	}
	paused := make(map[string]struct{}, len(st.Paused))
	for _, p := range st.Paused {
		paused[p] = struct{}{}
	}
	if old := s.control.paused.Load(); old == nil || !maps.Equal(*old, paused) {
		if old != nil || len(paused) > 0 {
			s.cfg.Logger.Info("scheduler: cluster-wide paused jobs", "jobs", st.Paused)
		}
		s.control.paused.Store(&paused)
	}
	for _, r := range st.Requests {
		s.mu.Lock()
		j := s.jobs[r.Job]
		s.mu.Unlock()
		if j == nil {
			continue // for another replica's jobs
		}
		// Counted before the claim: a scheduler that is stopping leaves
		// the request to another instance, and Shutdown waits for one it
		// claimed.
		if s.track() != nil {
			return
		}
		if _, err := ctl.ClaimRun(ctx, r.ID); err != nil {
			s.wg.Done()
			if !errors.Is(err, batontype.ErrNoRequest) {
				s.cfg.Logger.Warn("scheduler: cannot claim a run request", "job", r.Job, "request", r.ID, "err", err)
			}
			continue
		}
		s.cfg.Logger.Info("scheduler: running a requested run", "job", r.Job, "request", r.ID, "requested_by", r.RequestedBy)
		// Wait for the job's lock at most one lease length: a run in
		// progress ends by then unless it renews itself.
		limit := max(j.opts.atMostFor, s.cfg.CallTimeout)
		wctx, wcancel := context.WithTimeout(s.runCtx, limit)
		go s.runManual(wctx, j, func(err error) {
			wcancel() // the wait is over; the run has its own context
			if err != nil {
				s.cfg.Logger.Warn("scheduler: requested run did not start", "job", j.name, "request", r.ID, "err", err)
			}
		})
	}
}

// PauseCluster pauses the job named name on every replica that follows the
// provider's control state (see Config.ControlPoll): its ticks are skipped
// with ErrPaused until ResumeCluster. The name need not be registered on
// this instance. It needs a provider implementing lockprovider.Control
// (else ErrControlNotSupported).
func (s *Scheduler) PauseCluster(ctx context.Context, name string) error {
	return s.setPaused(ctx, name, true)
}

// ResumeCluster undoes PauseCluster (or baton jobs pause).
func (s *Scheduler) ResumeCluster(ctx context.Context, name string) error {
	return s.setPaused(ctx, name, false)
}

func (s *Scheduler) setPaused(ctx context.Context, name string, paused bool) error {
	if ctx == nil {
		return ErrNilContext
	}
	ctl := s.controlProvider()
	if ctl == nil {
		field := "PauseCluster"
		if !paused {
			field = "ResumeCluster"
		}
		return invalid(name, field, "", "needs a provider implementing lockprovider.Control and Config.NoControl unset", ErrControlNotSupported, nil)
	}
	if err := ctl.SetPaused(ctx, name, paused); err != nil {
		return withJob(name, err)
	}
	// Take effect here at once rather than at the announcement.
	for {
		old := s.control.paused.Load()
		m := map[string]struct{}{}
		if old != nil {
			m = maps.Clone(*old)
		}
		if paused {
			m[name] = struct{}{}
		} else {
			delete(m, name)
		}
		if s.control.paused.CompareAndSwap(old, &m) {
			return nil
		}
	}
}
