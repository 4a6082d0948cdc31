package clock

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx is done, and reports whether d passed
// with ctx still live. A d of zero or less waits for nothing.
func Sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
