package shedlock

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strings"

	"github.com/baton-go/baton/internal/backenderr"
	"github.com/baton-go/baton/internal/backenderr/pgerr"
	"github.com/baton-go/baton/internal/backenderr/rediserr"
)

// pgError wraps an error of operation op on name once. When PostgreSQL
// could not be reached or did not answer in time (as the native provider
// tells) it is reported as a *batontype.UnavailableError (never as a
// refusal); other errors (server error replies, the caller's cancellation)
// are passed on as they are.
func pgError(op, name string, err error) error {
	return backendError(op, name, err, pgerr.Classify)
}

// redisError is pgError for Redis errors.
func redisError(op, name string, err error) error {
	return backendError(op, name, err, rediserr.Classify)
}

func backendError(op, name string, err error, classify func(error) (unavailable, notSent bool)) error {
	return backenderr.Wrap("shedlock", op, name, err, classify)
}

// serverGone reports whether msg is the driver's text of a server error
// that ends the connection under a statement: ER_SERVER_SHUTDOWN (1053)
// or MariaDB's ER_CONNECTION_KILLED (1927).
func serverGone(msg string) bool {
	for _, n := range []string{"Error 1053", "Error 1927"} {
		if strings.HasPrefix(msg, n+" ") || strings.HasPrefix(msg, n+":") {
			return true
		}
	}
	return false
}

// sqlError is pgError for database/sql errors of the MySQL mode, which
// names no driver: the classification therefore relies on database/sql's
// own errors, the network errors the driver wraps, and the message of
// go-sql-driver/mysql's ErrInvalidConn (a connection that broke under a
// statement, outcome unknown) and of the server errors serverGone names.
func sqlError(op, name string, err error) error {
	return backendError(op, name, err, classifySQL)
}

func classifySQL(err error) (unavailable, notSent bool) {
	var opErr *net.OpError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), err.Error() == "sql: database is closed":
		return true, true
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return true, true
	case errors.Is(err, context.Canceled):
		return false, false
	case strings.HasSuffix(err.Error(), "invalid connection"), serverGone(err.Error()):
		return true, false
	}
	return backenderr.Transport(err), false
}
