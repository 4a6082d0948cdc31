package lockprovider

import (
	"context"

	"github.com/baton-go/baton/batontype"
)

// Control is implemented by providers that carry operators' control of
// scheduled jobs between the replicas of an application: a cluster-wide
// paused flag per job, and requests to run a job now that exactly one
// replica claims. Like the other capabilities it is optional and
// discovered by type assertion. Every method is one round trip.
type Control interface {
	// SetPaused sets (paused true) or clears the cluster-wide paused flag
	// of job and announces the change to watchers. Setting a flag that is
	// set, or clearing one that is not, is not an error. A flag lasts
	// until it is cleared; providers whose keys must expire keep it for
	// their record lifetime after the last change (see their docs).
	//
	// It records, on the backend's clock, when a pause begins (setting a
	// flag that is clear) and when it ends (clearing a flag that is set),
	// for ControlState.Pauses: setting a set flag keeps the start, and
	// clearing a clear one records nothing. Of the ended pauses only each
	// job's latest is kept.
	SetPaused(ctx context.Context, job string, paused bool) error

	// RequestRun records a request to run r.Job now and announces it. The
	// request stays pending until a ClaimRun takes it or r.TTL passes. It
	// returns the request with ID (128 random bits, hex), Requested and
	// Until (backend clock) set.
	RequestRun(ctx context.Context, r batontype.RunRequest) (batontype.RunRequest, error)

	// ClaimRun removes the pending request id and returns it. Of any
	// number of concurrent callers exactly one gets it; the others, and
	// callers of a request that expired or never existed, get
	// batontype.ErrNoRequest.
	ClaimRun(ctx context.Context, id string) (batontype.RunRequest, error)

	// ControlState returns the jobs paused cluster-wide, their pause
	// spans (the current pause and the latest ended one per job) and the
	// pending requests. Expired requests are dropped on the way.
	ControlState(ctx context.Context) (batontype.ControlState, error)

	// WatchControl arranges a non-blocking send on ch each time SetPaused
	// or RequestRun is called on any provider of the same backend, and
	// after the provider re-established a lost subscription (changes may
	// have gone unheard). Announcements are not guaranteed: watchers
	// still poll ControlState. stop cancels the registration; it is safe
	// to call more than once, and no goroutine of the registration
	// outlives it.
	WatchControl(ctx context.Context, ch chan<- struct{}) (stop func(), err error)
}
