// Package schedule computes the ticks of the scheduler's jobs and parses
// schedules: cron specs as Scheduler.Cron takes them and the registry's
// syntax that the scheduler publishes and operator tools read back. The
// scheduler and its read model (scheduler/jobstate) share it, so both
// compute the same ticks.
package schedule
