package backenderr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/baton-go/baton/internal/backenderr"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTransport(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{fmt.Errorf("%w: %w", context.Canceled, io.EOF), false},
		{errors.New("other"), false},
	} {
		if got := backenderr.Transport(tc.err); got != tc.want {
			t.Errorf("Transport(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
