package batch

import (
	"context"

	"github.com/baton-go/baton/lockprovider"
)

// Send fills in the results of the valid items (out[i].Err nil) of a
// validated acquire batch; run is nil for an AcquireBatch.
type Send func(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart, out []lockprovider.BatchResult)

// SendRelease fills in the errors of the valid items (errs[i] nil) of a
// validated release batch; ends is nil for a ReleaseBatch.
type SendRelease func(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, errs []error)

// Acquire frames an AcquireBatch.
func Acquire(ctx context.Context, ps []lockprovider.AcquireParams, send Send) ([]lockprovider.BatchResult, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	return acquire(ctx, ps, nil, send)
}

// AcquireRun frames an AcquireRunBatch: an invalid run fails the call.
func AcquireRun(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart, send Send) ([]lockprovider.BatchResult, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	if err := run.Validate(); err != nil {
		return nil, err
	}
	return acquire(ctx, ps, &run, send)
}

func acquire(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart, send Send) ([]lockprovider.BatchResult, error) {
	itemErrs, err := lockprovider.ValidateBatch(ps)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	out := make([]lockprovider.BatchResult, len(ps))
	for i, e := range itemErrs {
		out[i].Err = e
	}
	send(ctx, ps, run, out)
	return out, nil
}

// Release frames a ReleaseBatch.
func Release(ctx context.Context, ps []lockprovider.ReleaseParams, send SendRelease) ([]error, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	errs, err := lockprovider.ValidateReleaseBatch(ps)
	return release(ctx, ps, nil, errs, err, send)
}

// ReleaseRun frames a ReleaseRunBatch: ends must hold one RunEnd per
// item, and an item with an invalid RunEnd is invalid.
func ReleaseRun(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, send SendRelease) ([]error, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	errs, err := lockprovider.ValidateReleaseRunBatch(ps, ends)
	return release(ctx, ps, ends, errs, err, send)
}

func release(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, errs []error, err error, send SendRelease) ([]error, error) {
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	send(ctx, ps, ends, errs)
	return errs, nil
}

// Sweep runs deleteBatch, a statement that deletes at most size expired
// rows and says how many it deleted, until one deletes fewer, and
// returns the total: a table is swept in bounded statements, none holding
// many row locks. An error ends it with the total so far.
func Sweep(ctx context.Context, size int64, deleteBatch func(context.Context) (int64, error)) (int64, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return 0, err
	}
	var total int64
	for {
		n, err := deleteBatch(ctx)
		total += n
		if err != nil || n < size {
			return total, err
		}
	}
}
