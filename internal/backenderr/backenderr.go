// Package backenderr classifies the transport errors every backend client
// shares (a deadline, a connection cut, a network error), so that every
// provider tells unavailability from an answer in the same way. The
// driver-specific rules are in rediserr (go-redis) and pgerr (pgx), so a
// provider links only its own driver. The providers wrap what these report
// in a *batontype.UnavailableError.
package backenderr

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// Transport reports whether err, which the driver's own rules did not
// decide, means the server could not be reached or did not answer in time
// (the outcome is then unknown). The caller's cancellation is not the
// backend's doing.
func Transport(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne)
}
