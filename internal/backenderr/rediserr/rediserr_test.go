package rediserr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/backenderr/rediserr"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type redisReply string

func (e redisReply) Error() string { return string(e) }
func (redisReply) RedisError()     {}

func TestClassify(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		err                  error
		unavailable, notSent bool
	}{
		{fmt.Errorf("x: %w", dial), true, true},
		{goredis.ErrClosed, true, true},
		{goredis.ErrPoolTimeout, true, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true, false},
		{io.EOF, true, false},
		{context.DeadlineExceeded, true, false},
		{redisReply("LOADING Redis is loading the dataset in memory"), true, false},
		{redisReply("ERR unknown command"), false, false},
		{context.Canceled, false, false},
		{errors.New("other"), false, false},
	} {
		u, n := rediserr.Classify(tc.err)
		if u != tc.unavailable || n != tc.notSent {
			t.Errorf("Classify(%v) = %v, %v; want %v, %v", tc.err, u, n, tc.unavailable, tc.notSent)
		}
	}
}
