package memory

import (
	"context"

	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/lockprovider"
)

var (
	_ lockprovider.BatchAcquirer = (*Provider)(nil)
	_ lockprovider.BatchLedger   = (*Provider)(nil)
	_ lockprovider.BatchReleaser = (*Provider)(nil)
)

// AcquireBatch implements lockprovider.BatchAcquirer: Acquire for each
// item in turn, so every item has exactly Acquire's semantics.
func (p *Provider) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	return p.batch(ps, func(ap lockprovider.AcquireParams) (lockprovider.Lease, error) { return p.Acquire(ctx, ap) })
}

// AcquireRunBatch implements lockprovider.BatchLedger: AcquireRun for each
// item in turn.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	if err := check.Args(ctx, run.Validate()); err != nil {
		return nil, err
	}
	return p.batch(ps, func(ap lockprovider.AcquireParams) (lockprovider.Lease, error) { return p.AcquireRun(ctx, ap, run) })
}

func (p *Provider) batch(ps []lockprovider.AcquireParams, acquire func(lockprovider.AcquireParams) (lockprovider.Lease, error)) ([]lockprovider.BatchResult, error) {
	itemErrs, err := lockprovider.ValidateBatch(ps)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	out := make([]lockprovider.BatchResult, len(ps))
	for i, ap := range ps {
		if itemErrs[i] != nil {
			out[i].Err = itemErrs[i]
			continue
		}
		out[i].Lease, out[i].Err = acquire(ap)
	}
	return out, nil
}

// ReleaseBatch implements lockprovider.BatchReleaser: Release for each
// item in turn.
func (p *Provider) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	errs, err := lockprovider.ValidateReleaseBatch(ps)
	return releaseEach(errs, err, func(i int) error { return p.Release(ctx, ps[i]) })
}

// ReleaseRunBatch implements lockprovider.BatchLedger: ReleaseRun for
// each item in turn.
func (p *Provider) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	errs, err := lockprovider.ValidateReleaseRunBatch(ps, ends)
	return releaseEach(errs, err, func(i int) error { return p.ReleaseRun(ctx, ps[i], ends[i]) })
}

// releaseEach releases the valid items (errs[i] nil) in turn.
func releaseEach(errs []error, err error, release func(i int) error) ([]error, error) {
	if err != nil || len(errs) == 0 {
		return nil, err
	}
	for i := range errs {
		if errs[i] == nil {
			errs[i] = release(i)
		}
	}
	return errs, nil
}
