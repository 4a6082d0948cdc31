// Package jobstate is the operator's read model of scheduled jobs: what
// the job registry (lockprovider.Registry) and the run ledger
// (lockprovider.Ledger) say about the jobs that scheduler instances run.
// It reads; it never runs a job.
//
// List turns the registry's live instances into the jobs list, each job
// with its replicas, next tick, latest run and latest success; the status
// page and the baton command both show it. Check is the dead-man's
// switch: it finds ticks of locked jobs that no replica ran, that failed,
// or whose run never finished, and leaves out the jobs paused cluster-wide
// or on every live replica (RegisteredJob.PausedEverywhere). Unfinished
// decides whether an open run's process died, and ParseSchedule reads a
// registered schedule back.
package jobstate
