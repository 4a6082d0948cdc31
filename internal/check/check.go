package check

import (
	"context"

	"github.com/baton-go/baton/batontype"
)

// Args returns batontype.ErrNilContext for a nil ctx, else the first
// non-nil error of errs, else nil.
func Args(ctx context.Context, errs ...error) error {
	if ctx == nil {
		return batontype.ErrNilContext
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Watch is Args for the methods that return a stop function
// (NotifyRelease, WatchControl): for a nil ctx stop is a no-op, so that a
// caller who defers it before checking err does not panic; otherwise stop
// is nil.
func Watch(ctx context.Context, errs ...error) (stop func(), err error) {
	if ctx == nil {
		return func() {}, batontype.ErrNilContext
	}
	return nil, Args(ctx, errs...)
}

// Live is Args followed by ctx.Err(), for the methods that refuse a
// context that is done before they send anything.
func Live(ctx context.Context, errs ...error) error {
	if err := Args(ctx, errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// LiveWatch is Watch followed by ctx.Err().
func LiveWatch(ctx context.Context, errs ...error) (stop func(), err error) {
	if stop, err := Watch(ctx, errs...); err != nil {
		return stop, err
	}
	return nil, ctx.Err()
}
