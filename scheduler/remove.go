package scheduler

import (
	"container/heap"
	"fmt"
)

// Removal of jobs and lookup by name.

// ErrUnknownJob is returned (inside a *ValidationError) by RunNow and
// Remove for a name that no job of this scheduler has.
var ErrUnknownJob = fmt.Errorf("%w: no such job", ErrInvalid)

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
