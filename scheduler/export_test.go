package scheduler

// SetAfterDispatch makes the timer loop call f, under its lock, after it
// dispatched the n jobs due at a wake: a test's stand-in for the time
// that work takes.
func SetAfterDispatch(s *Scheduler, f func(n int)) { s.afterDispatch = f }
