package backenderr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/backenderr"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type redisReply string

func (e redisReply) Error() string { return string(e) }
func (redisReply) RedisError()     {}

func TestRedis(t *testing.T) {
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
		u, n := backenderr.Redis(tc.err)
		if u != tc.unavailable || n != tc.notSent {
			t.Errorf("Redis(%v) = %v, %v; want %v, %v", tc.err, u, n, tc.unavailable, tc.notSent)
		}
	}
}

func TestPostgres(t *testing.T) {
	for _, tc := range []struct {
		err                  error
		unavailable, notSent bool
	}{
		{errors.New("closed pool"), true, true},
		{&pgconn.PgError{Code: "57P01"}, true, false},
		{&pgconn.PgError{Code: "08006"}, true, false},
		{&pgconn.PgError{Code: "23505"}, false, false},
		{io.ErrUnexpectedEOF, true, false},
		{context.DeadlineExceeded, true, false},
		{context.Canceled, false, false},
		{errors.New("other"), false, false},
	} {
		u, n := backenderr.Postgres(tc.err)
		if u != tc.unavailable || n != tc.notSent {
			t.Errorf("Postgres(%v) = %v, %v; want %v, %v", tc.err, u, n, tc.unavailable, tc.notSent)
		}
	}
}
