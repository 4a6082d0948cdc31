package batch

import (
	"context"

	"github.com/baton-go/baton/lockprovider"
)

// Acquire frames an AcquireBatch. send is called with the results, in
// which every invalid item carries its error; it fills in those whose Err
// is nil.
func Acquire(ctx context.Context, ps []lockprovider.AcquireParams, send func(out []lockprovider.BatchResult)) ([]lockprovider.BatchResult, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	itemErrs, err := lockprovider.ValidateBatch(ps)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	out := make([]lockprovider.BatchResult, len(ps))
	for i, e := range itemErrs {
		out[i].Err = e
	}
	send(out)
	return out, nil
}

// Release frames a ReleaseBatch. send is called with the items' errors,
// set for the invalid items; it fills in those that are nil.
func Release(ctx context.Context, ps []lockprovider.ReleaseParams, send func(errs []error)) ([]error, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	errs, err := lockprovider.ValidateReleaseBatch(ps)
	return release(errs, err, send)
}

// ReleaseRun frames a ReleaseRunBatch as Release does; an item with an
// invalid RunEnd is invalid.
func ReleaseRun(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, send func(errs []error)) ([]error, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	errs, err := lockprovider.ValidateReleaseRunBatch(ps, ends)
	return release(errs, err, send)
}

// release sends a validated batch (errs holds one entry per item).
func release(errs []error, err error, send func(errs []error)) ([]error, error) {
	if err != nil || len(errs) == 0 {
		return nil, err
	}
	send(errs)
	return errs, nil
}
