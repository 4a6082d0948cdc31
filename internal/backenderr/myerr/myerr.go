// Package myerr classifies go-sql-driver/mysql and database/sql errors for
// the provider on MySQL and MariaDB (lockprovider/mysql).
package myerr

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/backenderr"
)

// Server error numbers the classification uses.
const (
	lockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT; also MariaDB's answer to NOWAIT
	deadlock        = 1213 // ER_LOCK_DEADLOCK
	lockNowait      = 3572 // ER_LOCK_NOWAIT (MySQL 8)
	serverShutdown  = 1053 // ER_SERVER_SHUTDOWN
	connKilled      = 1927 // ER_CONNECTION_KILLED (MariaDB)
	parseError      = 1064 // ER_PARSE_ERROR
)

// Classify reports whether err, from a database/sql call on the MySQL
// driver, means the server could not be reached or did not answer in time,
// and then whether nothing was sent: a failed dial, a closed handle, or
// driver.ErrBadConn, which database/sql returns only after its retries of
// a statement the driver had not sent. A connection that broke under a
// statement (mysql.ErrInvalidConn, a reset, EOF) and a server shutting
// down are unavailable with the outcome unknown.
func Classify(err error) (unavailable, notSent bool) {
	var (
		myErr *gomysql.MySQLError
		opErr *net.OpError
	)
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), err.Error() == "sql: database is closed":
		return true, true
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return true, true
	case errors.As(err, &myErr):
		n := myErr.Number
		return n == serverShutdown || n == connKilled, false
	case errors.Is(err, context.Canceled):
		return false, false
	case errors.Is(err, gomysql.ErrInvalidConn), errors.Is(err, gomysql.ErrPktSync), errors.Is(err, gomysql.ErrPktSyncMul):
		return true, false
	}
	return backenderr.Transport(err), false
}

// Contended returns, for an error that means another session was in the
// way and the statement changed nothing, batontype.ErrNotAcquired annotated
// with the server's error number; for any other error it returns nil.
// Those errors are a row locked by another session's transaction (NOWAIT:
// 3572 on MySQL, 1205 on MariaDB; or innodb_lock_wait_timeout, 1205) and a
// deadlock (1213), each of which rolls back the statement.
func Contended(err error) error {
	var myErr *gomysql.MySQLError
	if !errors.As(err, &myErr) {
		return nil
	}
	switch myErr.Number {
	case lockWaitTimeout, deadlock, lockNowait:
		return fmt.Errorf("%w (error %d)", batontype.ErrNotAcquired, myErr.Number)
	}
	return nil
}

// SyntaxError reports whether err is the server's refusal to parse a
// statement (1064): a statement the server does not know, which it
// therefore did not execute.
func SyntaxError(err error) bool {
	if err == nil { // the lock cycle asks after every acquire: no allocation then
		return false
	}
	var myErr *gomysql.MySQLError
	return errors.As(err, &myErr) && myErr.Number == parseError
}
