// Package backenderr classifies the client errors of the backends the
// providers share (go-redis, pgx), so that every provider on a backend
// tells unavailability from an answer in the same way. The providers wrap
// what it reports in a *batontype.UnavailableError.
package backenderr

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	goredis "github.com/redis/go-redis/v9"
)

// Redis reports whether err, from a go-redis call, means the server could
// not be reached or did not answer in time, and then whether the command
// cannot have been sent (a refused dial, a closed client, no pooled
// connection free in time). A server that answered but cannot serve
// (loading its data set, no master, cluster down, busy with a script) is
// unavailable too, of unknown outcome. The caller's cancellation is not
// the backend's doing.
func Redis(err error) (unavailable, notSent bool) {
	var rerr goredis.Error
	switch {
	case RedisNotSent(err):
		return true, true
	case errors.As(err, &rerr):
		switch code, _, _ := strings.Cut(rerr.Error(), " "); code {
		case "LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY":
			return true, false
		}
		return false, false
	case errors.Is(err, context.Canceled):
		return false, false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), netError(err):
		return true, false
	}
	return false, false
}

// RedisNotSent reports whether err, from a go-redis call, says the command
// never reached the server.
func RedisNotSent(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, goredis.ErrClosed) || errors.Is(err, goredis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &opErr) && opErr.Op == "dial")
}

// Postgres reports whether err, from a pgx call, means the server could
// not be reached or did not answer in time, and then whether pgx
// guarantees nothing was sent (a failed connection attempt, a closed pool,
// a context that ended before the statement went out). Connection
// exceptions (SQLSTATE class 08) and operator intervention (57P01 admin
// shutdown, 57P02 crash shutdown, 57P03 cannot connect now) mean the
// session ended under the statement: unavailable, outcome unknown. The
// caller's cancellation is not the backend's doing.
func Postgres(err error) (unavailable, notSent bool) {
	var (
		pgErr   *pgconn.PgError
		connErr *pgconn.ConnectError
	)
	switch {
	case errors.As(err, &connErr), pgconn.SafeToRetry(err), err.Error() == "closed pool":
		// "closed pool" is pgxpool's (puddle's) error for a closed pool,
		// before any connection is used.
		return true, true
	case errors.As(err, &pgErr):
		c := pgErr.Code
		return strings.HasPrefix(c, "08") || c == "57P01" || c == "57P02" || c == "57P03", false
	case errors.Is(err, context.Canceled):
		return false, false
	case pgconn.Timeout(err), errors.Is(err, context.DeadlineExceeded), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), netError(err):
		return true, false
	}
	return false, false
}

func netError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
