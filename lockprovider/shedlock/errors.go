package shedlock

import (
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
