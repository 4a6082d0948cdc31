package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// The control follower: reads the provider's control state (cluster-wide
// pauses and run requests) while the scheduler runs.

// DefaultControlPoll is the interval of control-state reads when
// Config.ControlPoll is zero.
const DefaultControlPoll = 5 * time.Second

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

// controlProvider returns the provider's Control unless Config.DisableControl.
func (s *Scheduler) controlProvider() lockprovider.Control {
	if s.cfg.DisableControl {
		return nil
	}
	c, _ := s.provider.(lockprovider.Control)
	return c
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
