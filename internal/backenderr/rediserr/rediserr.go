// Package rediserr classifies go-redis errors for the providers on Redis.
package rediserr

import (
	"errors"
	"net"
	"strings"
	"syscall"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/backenderr"
)

// Classify reports whether err, from a go-redis call, means the server
// could not be reached or did not answer in time, and then whether the
// command cannot have been sent (a refused dial, a closed client, no pooled
// connection free in time). A server that answered but cannot serve
// (loading its data set, no master, cluster down, busy with a script) is
// unavailable too, of unknown outcome.
func Classify(err error) (unavailable, notSent bool) {
	var rerr goredis.Error
	switch {
	case NotSent(err):
		return true, true
	case errors.As(err, &rerr):
		switch code, _, _ := strings.Cut(rerr.Error(), " "); code {
		case "LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY":
			return true, false
		}
		return false, false
	}
	return backenderr.Transport(err), false
}

// NotSent reports whether err, from a go-redis call, says the command never
// reached the server.
func NotSent(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, goredis.ErrClosed) || errors.Is(err, goredis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &opErr) && opErr.Op == "dial")
}
