package scheduler

import (
	"container/heap"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/baton-go/baton/internal/lease"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/observe"
)

// Scheduler runs registered jobs on their schedules. It is safe for
// concurrent use. Create it with New, register jobs with Every or Cron,
// then Start it; stop it with Shutdown or Close.
type Scheduler struct {
	provider lockprovider.Provider
	cfg      Config
	lease    *lease.Policy // of every run's lease
	releases *releases     // batches the runs' releases; nil if the provider cannot

	runCtx    context.Context // parent of every job context; cancelled with ErrClosed
	runCancel context.CancelCauseFunc
	wg        sync.WaitGroup // job goroutines

	mu       sync.Mutex
	state    int // stateNew, stateRunning, stateClosed
	jobs     map[string]*Job
	queue    jobHeap
	unnamed  int
	wake     chan struct{} // buffered 1: the queue's head may have changed
	stop     chan struct{} // closed to end the timer loop
	loopDone chan struct{}

	registry registrar // see ops.go

	control controller       // see follow.go
	obs     observe.Observer // Config.Observer; nil when not set (see emit)

	afterDispatch func(n int) // tests only: the loop's work for n due jobs takes time
}

// maxWait bounds the timer loop's sleep; see loop.
const maxWait = time.Minute

const (
	stateNew = iota
	stateRunning
	stateClosed
)

// New returns a scheduler that locks jobs through provider. cfg may be nil.
// It returns a *ValidationError for an invalid Config.
func New(provider lockprovider.Provider, cfg *Config) (*Scheduler, error) {
	if provider == nil {
		return nil, invalid("", "provider", "", "is nil", ErrInvalid, nil)
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	obs := observe.Join(c.Observer)
	pol := lease.NewPolicy(lease.Policy{
		Provider:    provider,
		CallTimeout: c.CallTimeout,
		Released:    errRunEnded,
		Now:         c.Now,
		Logger:      c.Logger,
		Label:       "scheduler",
		Events:      obs,
	})
	return &Scheduler{
		obs:       obs,
		provider:  provider,
		cfg:       c,
		lease:     pol,
		releases:  newReleases(provider, c.Ledger, c.CallTimeout/2, pol.ReleaseTimeout),
		runCtx:    ctx,
		runCancel: cancel,
		jobs:      make(map[string]*Job),
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		loopDone:  make(chan struct{}),
	}, nil
}

func (s *Scheduler) now() time.Time { return s.cfg.Now() }

// add registers j under its name, or a generated one for unnamed jobs.
func (s *Scheduler) add(j *Job, named bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return ErrClosed
	}
	if !named {
		for {
			s.unnamed++
			j.name = "job-" + strconv.Itoa(s.unnamed)
			if _, dup := s.jobs[j.name]; !dup {
				break
			}
		}
	} else if _, dup := s.jobs[j.name]; dup {
		return invalid(j.name, "Name", j.name, "is already registered", ErrDuplicateName, nil)
	}
	s.jobs[j.name] = j
	j.index = -1
	if s.state == stateRunning {
		s.jobsChanged()
		s.enqueue(j, s.now())
		if j.opts.catchUp {
			s.wg.Add(1)
			go s.catchUp(j)
		}
	}
	return nil
}

// enqueue computes j's next tick after now and queues it. s.mu is held.
func (s *Scheduler) enqueue(j *Job, now time.Time) {
	j.nextTick = j.sched.Next(now)
	if j.nextTick.IsZero() {
		return // the schedule has no more ticks
	}
	heap.Push(&s.queue, j)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start begins firing jobs, and starts the catch-up runs of jobs
// registered with CatchUp. It returns ErrClosed after Shutdown or Close,
// and does nothing if already started.
func (s *Scheduler) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateClosed:
		return ErrClosed
	case stateRunning:
		return nil
	}
	s.state = stateRunning
	s.startControl() // before the catch-ups, which wait for its first read
	now := s.now()
	for _, j := range s.jobs {
		s.enqueue(j, now)
		if j.opts.catchUp {
			s.wg.Add(1)
			go s.catchUp(j)
		}
	}
	go s.loop()
	s.startRegistry()
	return nil
}

// loop is the single timer of the scheduler: it sleeps until the earliest
// tick of all jobs, so idle jobs cost nothing but their heap entry.
func (s *Scheduler) loop() {
	defer close(s.loopDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		n := s.fire(s.now())
		if s.afterDispatch != nil {
			s.afterDispatch(n)
		}
		wait := s.nextWait(s.now())
		s.mu.Unlock()

		var tc <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case <-tc:
		case <-s.wake:
			timer.Stop()
		case <-s.stop:
			return
		}
	}
}

// stopTicking moves the scheduler to its closed state, which refuses new
// registrations and Start, ends the timer loop and waits until the loop has
// returned (at once if it never started). Running jobs are not touched.
func (s *Scheduler) stopTicking() {
	s.mu.Lock()
	prev := s.state
	if prev != stateClosed {
		s.state = stateClosed
		close(s.stop)
	}
	s.mu.Unlock()
	if prev == stateNew {
		close(s.loopDone)
	}
	<-s.loopDone
	s.stopRegistry()
	s.stopControl()
}

// Shutdown stops firing new ticks and waits for running jobs to return and
// release their locks. When ctx is done first, it cancels the jobs'
// contexts (cause ErrClosed), waits for them to return, and returns
// ctx.Err(). Later calls return at once after the first completes. A nil
// ctx counts as context.Background (no bound on the wait).
func (s *Scheduler) Shutdown(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background() // as Lock.Release: a clean-up path must not panic or be skipped
	}
	s.stopTicking()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.runCancel(ErrClosed)
		return nil
	case <-ctx.Done():
		s.runCancel(ErrClosed)
		<-done
		return ctx.Err()
	}
}

// Close stops firing new ticks, cancels running jobs' contexts (cause
// ErrClosed) and waits for them to return and release their locks.
func (s *Scheduler) Close() error {
	s.stopTicking()
	s.runCancel(ErrClosed)
	s.wg.Wait()
	return nil
}

// catchUp runs j once for its latest tick before Start if no replica ran
// that tick.
func (s *Scheduler) catchUp(j *Job) {
	defer s.wg.Done()
	prev := j.sched.Prev(s.now())
	if prev.IsZero() || prev.Unix() <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.CallTimeout)
	info, err := s.provider.(lockprovider.Inspector).Inspect(ctx, j.name)
	cancel()
	ev := Event{Job: j.name, Tick: prev, CatchUp: true}
	if err != nil {
		if s.runCtx.Err() != nil {
			return
		}
		ev.Err, ev.Outcome = err, observe.OutcomeError
		j.failures.Add(1)
		s.cfg.Logger.WarnContext(s.runCtx, "scheduler: catch-up: cannot read last tick", "job", j.name, "tick", prev, "err", err)
		s.emit(s.runCtx, observe.JobCatchUp, &ev)
		return
	}
	if info.Exists && !info.LastTick.Before(prev) {
		s.cfg.Logger.DebugContext(s.runCtx, "scheduler: catch-up not needed", "job", j.name, "tick", prev, "last_tick", info.LastTick)
		return
	}
	s.controlRead()
	s.cfg.Logger.InfoContext(s.runCtx, "scheduler: catching up a missed tick", "job", j.name, "tick", prev, "last_tick", info.LastTick)
	ev.Outcome = observe.OutcomeOK
	s.emit(s.runCtx, observe.JobCatchUp, &ev)
	s.wg.Add(1)
	s.execute(j, prev, true)
}

// emit reports ev, as an event of kind k, to the scheduler's observer:
// Config.Observer. It is the scheduler's only way of
// reporting events. For a begin event (observe.JobAttempt,
// observe.JobStarted) it returns the context to run what follows with;
// otherwise ctx.
func (s *Scheduler) emit(ctx context.Context, k observe.Kind, ev *Event) context.Context {
	if s.obs == nil {
		return ctx
	}
	e := *ev
	e.Kind = k
	return s.obs.Observe(ctx, e)
}

// jobHeap orders jobs by next tick.
type jobHeap []*Job

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(a, b int) bool { return h[a].nextTick.Before(h[b].nextTick) }
func (h jobHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].index, h[b].index = a, b
}
func (h *jobHeap) Push(x any) {
	j := x.(*Job)
	j.index = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	j.index = -1
	*h = old[:len(old)-1]
	return j
}
