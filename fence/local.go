package fence

import (
	"context"
	"sync"
)

// Resource fences an in-process resource: it remembers the largest token it
// has seen and runs work only for tokens at least that large. The zero value
// is ready to use; it is safe for concurrent use.
type Resource struct {
	mu   sync.Mutex
	last int64
}

// Do runs fn if token is not smaller than every token seen before, recording
// token first; otherwise it returns an error matching ErrStaleToken without
// running fn. Equal tokens are accepted, so one grant may write many times.
// fn runs under the Resource's mutex, so calls are serialised; fn's error is
// returned as is (the token stays recorded).
func (r *Resource) Do(token int64, fn func() error) error {
	if err := checkToken(token); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.last {
		return stale(token, r.last)
	}
	r.last = token
	if fn == nil {
		return nil
	}
	return fn()
}

// DoContext is Do for a holder whose lock travels in ctx (the Context of a
// baton.Lock, a scheduled job's context, or one derived from them): when the
// lock's trust window has passed it runs nothing and returns an error
// matching baton.ErrLockLost. A ctx without a lock behaves as Do.
func (r *Resource) DoContext(ctx context.Context, token int64, fn func() error) error {
	if err := checkLease(ctx); err != nil {
		return err
	}
	return r.Do(token, fn)
}

// Last returns the largest token seen, or 0.
func (r *Resource) Last() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// Value is a fenced in-process value: Write stores v only for a token not
// smaller than every token seen before. The zero value holds T's zero value
// and has seen no token.
type Value[T any] struct {
	r Resource
	v T
}

// Write stores v if token is not stale, and returns an error matching
// ErrStaleToken otherwise.
func (x *Value[T]) Write(token int64, v T) error {
	return x.r.Do(token, func() error { x.v = v; return nil })
}

// WriteContext is Write with the lock check of Resource.DoContext.
func (x *Value[T]) WriteContext(ctx context.Context, token int64, v T) error {
	if err := checkLease(ctx); err != nil {
		return err
	}
	return x.Write(token, v)
}

// Read returns the value and the token of the write that set it (or of the
// last accepted token).
func (x *Value[T]) Read() (T, int64) {
	x.r.mu.Lock()
	defer x.r.mu.Unlock()
	return x.v, x.r.last
}
