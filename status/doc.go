// Package status serves a status page for operators: which scheduled jobs
// exist and how their last runs went, a timeline of runs across replicas,
// the locks held now and the rate-limit keys near or over their limit.
//
//	h, err := status.New(&status.Config{
//		Backends: []status.Backend{
//			{Name: "redis", Provider: redisProvider},       // jobs, ledger, registry
//			{Name: "postgres", Provider: postgresProvider}, // locks, rate limits
//		},
//	})
//	mux.Handle("/ops/baton/", requireOperator(h))
//
// The handler is an http.Handler with every asset embedded: the page
// needs no network beyond it, and no build step. It links relatively, so
// it can be mounted under any prefix, on a mux pattern or behind
// http.StripPrefix. The page polls JSON endpoints below the mount point
// (api/jobs, api/timeline, api/locks, api/limits) every Config.Refresh;
// each view is computed at most once per Refresh whatever the number of
// viewers.
//
// # Views
//
// Jobs lists what the job registry holds (lockprovider.Registry): each
// job's schedule, next tick, last run (replica, duration, outcome), last
// success, live replicas and a state, problems first: unknown (its
// backend could not be read), missed, failed or unfinished (jobstate.Check's
// verdict on its latest due tick), paused (cluster-wide through
// lockprovider.Control, or on every replica's instance: its ticks are
// skipped on purpose), running, ok, or unlocked (its replicas' latest
// runs come from the registry). The job page (#job/NAME?backend=B, served
// by api/job) adds the run history from the ledger with whole errors and
// panicked runs' stacks and who force-released a run's lock and when (as
// the backend recorded it, whether the page or `baton locks release
// --force` did it), the lock now, pending run requests, the problems
// of the last 24 hours, and the ticks each replica skipped, by reason, as
// its instance published them (batontype.JobSpec.Skips).
// Timeline draws the run ledger (lockprovider.Ledger): one group per job,
// a row of ticks with missed ticks marked (and paused ticks, never
// missed: for a job paused now, and within a past cluster-wide pause the
// backend remembers, its latest), and one lane per replica with each run
// from start to finish, coloured by outcome; catch-up and manual runs are
// outlined, and hovering a run shows its token, duration and error.
// Locks lists held leases (lockprovider.Inspector) with holder, token,
// time left counting down and its AtLeastFor bound (as the provider
// reports it, or for a job's lock from the registry). Rate limits lists
// keys with state (lockprovider.RateLister); with Config.Limits it also
// shows what remains and marks keys near or over their limit. A backend
// that cannot be read is unknown in every view it feeds, never empty;
// an empty view names what it read (Backend.Source).
//
// The timeline stays cheap on long ranges: the page asks for the visible
// range, a number of buckets (one per few pixels) and a page of jobs. A
// job with more runs in the range than buckets is sent as segments
// (neighbouring buckets with the same worst outcome merged, with counts),
// so a response grows with buckets × replicas, not with runs.
//
// # Actions and security
//
// The page is read-only unless Config.Actions is set. Then it can
// force-release a lock (lockprovider.Admin, conditional on the token the
// operator saw), reset a rate-limit key and, for a Backend with a Control,
// run a job now, pause or resume it. The page asks a second click for
// each; an action on a job no live instance of that backend has is 404.
// Actions are POSTs with a JSON body, checked by
// http.CrossOriginProtection; with actions off they are refused with 403
// Forbidden. Every action is logged at info.
//
// Every request must name a Host the handler answers for: loopback names,
// IP addresses and Config.AllowedHosts; any other gets 403, which stops a
// hostile page that had its own name resolve to the server (DNS
// rebinding). With Config.Token every request but /healthz must carry the
// token (bearer, or basic-auth password); without it the handler
// authenticates no one: mount it behind the application's own
// authentication and authorisation, as the example shows. The page shows
// lock names, replica names, rate-limit keys and job error texts, which
// may be sensitive. /healthz answers without reading a backend; /readyz
// checks every backend at once, each under Config.Timeout.
package status
