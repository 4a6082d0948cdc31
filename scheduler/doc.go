// Package scheduler runs periodic jobs on every replica of a service and,
// for locked jobs, makes exactly one replica run each tick, with the
// semantics of ShedLock (lockAtMostFor, lockAtLeastFor) plus tick identity
// and fencing tokens.
//
//	sched, err := scheduler.New(provider, &scheduler.Config{Logger: logger})
//	_, err = sched.Every(24*time.Hour, scheduler.Offset(2*time.Hour)).
//		Locked("daily-report", scheduler.AtMostFor(30*time.Minute)).
//		Do(func(ctx context.Context, run scheduler.Run) error { ... })
//	err = sched.Start()
//	defer sched.Shutdown(ctx)
//
// # Ticks
//
// A tick is a job's scheduled time. Every(d) ticks at every multiple of d
// since the Unix epoch (plus an Offset); Cron specs tick at the times they
// name, in Config.Location (UTC by default) or their CRON_TZ= zone; the
// "@every d" descriptor ticks like Every. Every replica computes the same
// ticks, whenever it started. When several ticks passed while the process
// could not run (a pause, a suspended VM, a wall-clock step), only the
// latest of them runs; see CatchUp for ticks missed before start-up.
//
// # A tick of a locked job
//
// Every replica fires at the tick (by its own clock) and tries to acquire
// the job's name with that tick. The provider grants the lease to one
// replica only, and refuses a tick that is not newer than the last one it
// granted, so a replica that fires late cannot run a tick that already
// ran, even after the winner released the lock:
//
//	replica A (on time) : T ──acquire(T) ✓── run ──release──┐
//	replica B (50ms late):     T+50ms ──acquire(T) ✗ ErrNotAcquired or ErrStaleTick: skip
//	lease               :      [granted ........ held ........|.. AtLeastFor bound ..]
//	replica A, next tick: T+d ──acquire(T+d) ✓ ...
//
// Skips are logged at debug, counted (Job.Stats, and by reason in the
// registry entry with its next renewal: batontype.JobSpec.Skips, which
// `baton jobs skips` lists) and reported to Hooks.Skipped, whose Event.Err matches ErrNotAcquired, ErrStaleTick,
// ErrStillRunning or ErrMissed (a *MissedError: ticks that passed while
// this process could not fire them; only the latest runs). An acquire whose outcome is unknown (timeout, connection
// error) is logged at warn and reported to Hooks.Failed; the job does not
// run that tick, and the scheduler releases whatever the acquire may have
// granted (with the same owner token, bounded by Config.CallTimeout), as it
// does when Close or Shutdown interrupts an acquire, so that the next tick
// is not blocked until the lease expires.
//
// Locked jobs due at the same instant are claimed together when the
// provider implements lockprovider.BatchAcquirer (BatchLedger with
// Config.Ledger), in batches of at most lockprovider.MaxBatch names, each
// batch one round trip on a goroutine of its own; every job's answer is
// handled as a single claim's, with the trust window counted from the
// batch's send. The timer computes its next wait after handing out the
// due jobs, so a tick with many jobs does not make the next one late.
//
// The winner calls the job with a Run carrying the name, the tick and the
// lease's fencing token; pass the token to resources that can reject stale
// writers. When the job returns, the lease is released; the provider keeps
// it until AtLeastFor after the grant if that is later. A job
// registered without Locked runs on every replica at every tick.
//
// A job does not overlap itself on one instance: a tick due while the
// previous run there is still going is skipped with ErrStillRunning. A run
// that has returned and is only releasing its lease does not count: the
// tick waits for the release, which its timeout bounds, and then claims.
//
// # Lost locks and the trust window
//
// A lease lasts AtMostFor on the provider's clock. The scheduler never
// compares the provider's absolute time with its own: it counts the
// lease's granted length (Lease.Until − Lease.GrantedAt) from the instant
// it sent the acquire, on its own monotonic clock, minus a safety margin
// (1% of the length plus 20 ms, or a quarter of the length if that is
// less) for clocks that run at slightly different rates and for timers
// that fire late under load. That local trust window ends before the
// lease, whatever the offset between the clocks and however slow the
// round trip. When it ends while the job runs, the job's context is
// cancelled with cause ErrLockLost (read it with context.Cause) and
// Hooks.LockLost is called: another replica may hold the lease soon.
//
// The cancellation is driven by a timer, which a paused or starved process
// runs late. Run.Check compares the window with the clock at once; the
// fenced writes of package fence call it when given the job's context.
//
// Jobs that may run longer use AutoRenew or Run.Extend; each successful
// extension restarts the window at the moment it was sent, minus the same
// margin. AutoRenew extends by AtMostFor a third of AtMostFor after the
// previous extension was sent (not after its reply, so slow round trips do
// not add up); an extension that finds the lease gone cancels the context
// with ErrLockLost, and one that fails otherwise is retried promptly until
// the window ends.
//
// # Clock skew
//
// Replicas whose clocks disagree fire at different instants of real time.
// Tick identity keeps such a replica from running a tick twice; leases
// are timed by the provider alone. Skew only delays a lagging replica's
// attempt, and when the leading replica is down the job runs late by the
// skew. AtLeastFor still matters for providers or setups without tick
// identity and for spacing runs: a lagging replica that tries while the
// bound holds is skipped with ErrNotAcquired.
//
// # Catch-up
//
// A job registered with CatchUp runs once at Start when the latest tick
// before Start ran on no replica, according to the provider's record of
// the last tick granted (lockprovider.Inspector). The run carries that
// tick, so replicas starting together still run it once.
//
// # Run ledger, job registry, missed ticks
//
// With Config.Ledger and a provider implementing lockprovider.Ledger, the
// claim of each tick opens a run record and the release completes it
// (replica, token, start, end, outcome: succeeded, failed, panicked,
// lock_lost or shut_down, and the error text) in the round trips they
// already make. A provider implementing lockprovider.Registry receives
// this instance's jobs and a heartbeat from Start to Shutdown (unless
// Config.DisableRegistry). From both, the operator read model in package
// scheduler/jobstate lists the jobs, finds the ticks that no replica ran,
// that failed, or whose run never finished (Check, a dead-man's switch),
// and reads a registered schedule back (ParseSchedule); the status page
// and the baton command use it.
//
// # Control at run time
//
// RunNow runs a job now as a manual run: it holds the job's lock without
// claiming a tick, so it never consumes or blocks a scheduled tick (a tick
// that comes during it runs right after it). Job.Pause and Job.Resume act
// on this instance only (the registry shows the pause, as the job's
// option "paused"); Scheduler.Pause and Scheduler.Resume cluster-wide,
// on every instance that follows the provider's lockprovider.Control, which
// also carries the run
// requests of the baton command's "jobs run" (claimed by exactly one
// instance). Paused ticks are skipped with ErrPaused. Remove unregisters a
// job at run time. Builder.Retry retries a failed run inside its claimed
// tick, Builder.Jitter delays each run by a per-(job, tick) amount that
// every replica computes alike, Builder.Timeout bounds unlocked jobs.
//
// # Errors and panics
//
// Registration errors come from Do: a *SpecError for a bad cron spec
// (naming the field and value), a *ValidationError otherwise; both match
// ErrInvalid and their specific sentinel with errors.Is. A job's error or
// panic (as a *PanicError) is logged and reported to Hooks.Failed; the
// lease is released either way.
//
// # Lifecycle and cost
//
// Start begins ticking; Shutdown stops ticking, waits for running jobs,
// cancels them (cause ErrClosed) if its context ends first, and returns
// once every job has returned and released its lease; Close cancels at
// once and waits. All three may be called more than once. One goroutine
// and one timer serve all jobs, ordered in a heap: idle jobs cost no CPU.
// Jobs due at the same tick run concurrently, one goroutine each. Their
// claims and releases go in batches on a provider with
// lockprovider.BatchAcquirer and BatchReleaser (see "A tick of a locked
// job"); on another provider a tick of N locked jobs costs N acquire and N
// release round trips at once.
//
// # Telemetry
//
// Config.Observer receives the scheduler's events (package observe): per
// tick an attempt, the claim (with its latency) or a skip (with its
// reason), the run's start and end (with outcome and duration), lost
// locks, catch-ups, and its leases' extensions and releases. The tick's
// events are reported under the context the observer returned for
// observe.JobAttempt, and the job function runs with the one it returned
// for observe.JobStarted, so a tracing adapter nests claim, run and
// release under one span per tick and the job's own spans under the run.
// Hooks is an Observer with one function per outcome, for the simple
// cases: Config{Observer: scheduler.Hooks{Failed: ...}}.
package scheduler
