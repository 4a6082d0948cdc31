package status

import (
	"context"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// ProviderControl returns the Control of a provider that implements
// lockprovider.Control: run-now records a run request that one live
// scheduler instance with the job claims, and pause and resume set the
// job's cluster-wide paused flag, as `baton jobs run|pause|resume` do.
// A run request made by the page's run-now button is attributed like its
// force-releases, "page:" and the sender's address; requestedBy names the
// requester of calls made otherwise (the application's own).
func ProviderControl(p lockprovider.Control, requestedBy string) Control {
	return providerControl{p, requestedBy}
}

type providerControl struct {
	p  lockprovider.Control
	by string
}

func (c providerControl) RunNow(ctx context.Context, job string) error {
	_, err := c.requestRun(ctx, job)
	return err
}

func (c providerControl) requestRun(ctx context.Context, job string) (batontype.RunRequest, error) {
	by := c.by
	if page, ok := ctx.Value(senderKey{}).(string); ok {
		by = page
	}
	return c.p.RequestRun(ctx, batontype.RunRequest{Job: job, RequestedBy: by})
}

// senderKey carries an action's sender (pageBy) to the Control it calls.
type senderKey struct{}

func (c providerControl) Pause(ctx context.Context, job string) error {
	return c.p.SetPaused(ctx, job, true)
}

func (c providerControl) Resume(ctx context.Context, job string) error {
	return c.p.SetPaused(ctx, job, false)
}
