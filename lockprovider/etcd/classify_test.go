package etcd

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-go/baton/batontype"
)

// classify maps every timeout, lost quorum, leader change and unreachable
// member that an etcd 3.4 server or the v3 client reports, in the forms
// the client returns them (a gRPC status, or the rpctypes.EtcdError the
// client converts known server texts to), to an *UnavailableError, and
// leaves other errors alone.
func TestClassify(t *testing.T) {
	type want int
	const (
		other   want = iota // returned as is
		unknown             // *UnavailableError, outcome unknown
		notSent             // *UnavailableError with NotSent
	)
	server := []struct {
		name string
		err  error
		want want
	}{
		{"3.4 proposal without leader", status.Error(codes.Unknown, "context deadline exceeded"), unknown},
		{"3.4 read canceled by the server", status.Error(codes.Unknown, "context canceled"), unknown},
		{"no leader", rpctypes.ErrGRPCNoLeader, unknown},
		{"leader changed", rpctypes.ErrGRPCLeaderChanged, unknown},
		{"server stopped", rpctypes.ErrGRPCStopped, unknown},
		{"request timed out", rpctypes.ErrGRPCTimeout, unknown},
		{"timed out, leader failure", rpctypes.ErrGRPCTimeoutDueToLeaderFail, unknown},
		{"timed out, connection lost", rpctypes.ErrGRPCTimeoutDueToConnectionLost, unknown},
		{"timed out, applied index", rpctypes.ErrGRPCTimeoutWaitAppliedIndex, unknown},
		{"unhealthy", rpctypes.ErrGRPCUnhealthy, unknown},
		{"not capable", rpctypes.ErrGRPCNotCapable, unknown},
		{"server deadline", rpctypes.ErrGRPCDeadlineExceeded, unknown},
		{"too many requests", rpctypes.ErrGRPCRequestTooManyRequests, notSent},
		{"connection lost mid-call", status.Error(codes.Unavailable, "error reading from server: EOF"), unknown},
		{"transport closing", status.Error(codes.Unavailable, "transport is closing"), unknown},
		{"grpc deadline", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), unknown},
		{"client deadline", context.DeadlineExceeded, unknown},
		{"dial refused, fail fast", status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`), notSent},
		{"no connection by the deadline", status.Error(codes.DeadlineExceeded, `latest balancer error: connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`), notSent},
		{"no connection yet", status.Error(codes.DeadlineExceeded, "context deadline exceeded while waiting for connections to become ready"), notSent},
		{"client closed", status.Error(codes.Canceled, "grpc: the client connection is closing"), notSent},
		{"compacted", rpctypes.ErrGRPCCompacted, other},
		{"no space", rpctypes.ErrGRPCNoSpace, other},
		{"permission denied", rpctypes.ErrGRPCPermissionDenied, other},
		{"unknown, other text", status.Error(codes.Unknown, "boom"), other},
		{"canceled, not by the caller", status.Error(codes.Canceled, "stream reset"), other},
		{"plain", errors.New("boom"), other},
	}
	live := t.Context()
	for _, tc := range server {
		// The client hands server errors back either as the gRPC status or
		// converted to an rpctypes.EtcdError; both must classify alike.
		forms := map[string]error{"status": tc.err, "client": rpctypes.Error(tc.err)}
		for form, err := range forms {
			for _, sent := range []bool{false, true} {
				got := classify(live, live, err, !sent)
				w := tc.want
				if w == unknown && !sent {
					w = notSent // a failure before the deciding request
				}
				expect(t, tc.name+" ("+form+")", got, err, w == other, w == notSent)
			}
		}
	}

	// An expired operation context makes any failure a timeout.
	expired, cancel := context.WithDeadline(live, time.Now().Add(-time.Millisecond))
	defer cancel()
	err := errors.New("anything")
	expect(t, "after the deadline", classify(live, expired, err, false), err, false, false)

	// The deadline passed but its timer has not fired yet (Err is nil).
	racing := deadlineOnly{Context: live, at: time.Now().Add(-time.Millisecond)}
	err = status.Error(codes.Unknown, "some text")
	expect(t, "deadline passed, timer pending", classify(live, racing, err, false), err, false, false)

	// The caller's context ending wins: its error, not an unavailability.
	done, cancelDone := context.WithCancel(live)
	cancelDone()
	if got := classify(done, done, rpctypes.ErrGRPCTimeout, false); !errors.Is(got, context.Canceled) || errors.Is(got, batontype.ErrUnavailable) {
		t.Errorf("caller canceled: %v, want context.Canceled", got)
	}
}

func expect(t *testing.T, name string, got, cause error, isOther, wantNotSent bool) {
	t.Helper()
	if isOther {
		if got != cause {
			t.Errorf("%s: %v, want the error as is", name, got)
		}
		return
	}
	u, ok := errors.AsType[*batontype.UnavailableError](got)
	switch {
	case !ok || !errors.Is(got, batontype.ErrUnavailable) || errors.Is(got, batontype.ErrNotAcquired):
		t.Errorf("%s: %v (%T), want *UnavailableError", name, got, got)
	case u.NotSent != wantNotSent:
		t.Errorf("%s: NotSent %v, want %v", name, u.NotSent, wantNotSent)
	case !errors.Is(got, cause):
		t.Errorf("%s: does not unwrap to its cause", name)
	}
}

// deadlineOnly has a deadline that has passed while Err still reports
// nil, as a context does between its deadline and its timer firing.
type deadlineOnly struct {
	context.Context
	at time.Time
}

func (d deadlineOnly) Deadline() (time.Time, bool) { return d.at, true }
