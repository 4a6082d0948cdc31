// Package pgerr classifies pgx errors for the providers on PostgreSQL.
package pgerr

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-go/baton/internal/backenderr"
)

// Classify reports whether err, from a pgx call, means the server could not
// be reached or did not answer in time, and then whether pgx guarantees
// nothing was sent (a failed connection attempt, a closed pool, a context
// that ended before the statement went out). Connection exceptions
// (SQLSTATE class 08) and operator intervention (57P01 admin shutdown,
// 57P02 crash shutdown, 57P03 cannot connect now) mean the session ended
// under the statement: unavailable, outcome unknown.
func Classify(err error) (unavailable, notSent bool) {
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
	case pgconn.Timeout(err), errors.Is(err, pgconn.ErrConnClosed):
		return true, false
	}
	return backenderr.Transport(err), false
}
