package shedlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/lockprovider"
)

// backendError wraps an error of operation op on name once. When the
// backend could not be reached or did not answer in time it is reported as
// a *lockprovider.UnavailableError (never as a refusal); other errors
// (server error replies, the caller's cancellation) are passed on as they
// are.
func backendError(op, name string, err error) error {
	if unreachable(err) {
		err = &lockprovider.UnavailableError{NotSent: pgconn.SafeToRetry(err), Err: err}
	}
	return fmt.Errorf("shedlock: %s %q: %w", op, name, err)
}

func unreachable(err error) bool {
	var (
		pgErr   *pgconn.PgError
		connErr *pgconn.ConnectError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &pgErr), errors.Is(err, context.Canceled):
		return false // an answer, or the caller gave up
	case errors.As(err, &connErr), errors.As(err, &netErr), pgconn.Timeout(err),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, goredis.ErrClosed), errors.Is(err, goredis.ErrPoolTimeout):
		return true
	}
	return false
}
