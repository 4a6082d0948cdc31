package memory

import (
	"context"

	"github.com/baton-go/baton/internal/batch"
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
	return batch.Acquire(ctx, ps, func(out []lockprovider.BatchResult) {
		each(out, ps, func(ap lockprovider.AcquireParams) (lockprovider.Lease, error) { return p.Acquire(ctx, ap) })
	})
}

// AcquireRunBatch implements lockprovider.BatchLedger: AcquireRun for each
// item in turn.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	if err := check.Args(ctx, run.Validate()); err != nil {
		return nil, err
	}
	return batch.Acquire(ctx, ps, func(out []lockprovider.BatchResult) {
		each(out, ps, func(ap lockprovider.AcquireParams) (lockprovider.Lease, error) { return p.AcquireRun(ctx, ap, run) })
	})
}

// each acquires the valid items (out[i].Err nil) in turn.
func each(out []lockprovider.BatchResult, ps []lockprovider.AcquireParams, acquire func(lockprovider.AcquireParams) (lockprovider.Lease, error)) {
	for i, ap := range ps {
		if out[i].Err == nil {
			out[i].Lease, out[i].Err = acquire(ap)
		}
	}
}

// ReleaseBatch implements lockprovider.BatchReleaser: Release for each
// item in turn.
func (p *Provider) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	return batch.Release(ctx, ps, func(errs []error) {
		releaseEach(errs, func(i int) error { return p.Release(ctx, ps[i]) })
	})
}

// ReleaseRunBatch implements lockprovider.BatchLedger: ReleaseRun for
// each item in turn.
func (p *Provider) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	return batch.ReleaseRun(ctx, ps, ends, func(errs []error) {
		releaseEach(errs, func(i int) error { return p.ReleaseRun(ctx, ps[i], ends[i]) })
	})
}

// releaseEach releases the valid items (errs[i] nil) in turn.
func releaseEach(errs []error, release func(i int) error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = release(i)
		}
	}
}
