package memory

import (
	"context"

	"github.com/baton-go/baton/internal/batch"
	"github.com/baton-go/baton/lockprovider"
)

// AcquireBatch implements lockprovider.BatchAcquirer: Acquire for each
// item in turn, so every item has exactly Acquire's semantics.
func (p *Provider) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	return batch.Acquire(ctx, ps, p.batch)
}

// AcquireRunBatch implements lockprovider.BatchLedger: AcquireRun for each
// item in turn.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	return batch.AcquireRun(ctx, ps, run, p.batch)
}

// batch acquires the valid items (out[i].Err nil) in turn.
func (p *Provider) batch(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart, out []lockprovider.BatchResult) {
	for i, ap := range ps {
		switch {
		case out[i].Err != nil:
		case run == nil:
			out[i].Lease, out[i].Err = p.Acquire(ctx, ap)
		default:
			out[i].Lease, out[i].Err = p.AcquireRun(ctx, ap, *run)
		}
	}
}

// ReleaseBatch implements lockprovider.BatchReleaser: Release for each
// item in turn.
func (p *Provider) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	return batch.Release(ctx, ps, p.releaseBatch)
}

// ReleaseRunBatch implements lockprovider.BatchLedger: ReleaseRun for
// each item in turn.
func (p *Provider) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	return batch.ReleaseRun(ctx, ps, ends, p.releaseBatch)
}

// releaseBatch releases the valid items (errs[i] nil) in turn.
func (p *Provider) releaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, errs []error) {
	for i := range errs {
		switch {
		case errs[i] != nil:
		case ends == nil:
			errs[i] = p.Release(ctx, ps[i])
		default:
			errs[i] = p.ReleaseRun(ctx, ps[i], ends[i])
		}
	}
}
