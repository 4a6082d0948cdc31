package backenderr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/baton-go/baton/batontype"
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

func TestWrap(t *testing.T) {
	boom := errors.New("boom")
	down := func(error) (bool, bool) { return true, true }
	up := func(error) (bool, bool) { return false, false }
	if err := backenderr.Wrap("p", "acquire", "n", boom, up); err.Error() != `p: acquire "n": boom` || !errors.Is(err, boom) || errors.Is(err, batontype.ErrUnavailable) {
		t.Errorf("server error: %v", err)
	}
	err := backenderr.Wrap("p", "ping", "", boom, down)
	var ue *batontype.UnavailableError
	if err.Error() == "" || !errors.As(err, &ue) || !ue.NotSent || !errors.Is(err, boom) || !strings.Contains(err.Error(), "p: ping: boom") {
		t.Errorf("unreachable: %v", err)
	}
}

func TestAcquireWrapper(t *testing.T) {
	boom, busy := errors.New("boom"), errors.New("busy")
	wrap := backenderr.Wrapper("p", func(error) (bool, bool) { return false, false })
	acquire := backenderr.AcquireWrapper(wrap, func(err error) error {
		if errors.Is(err, busy) {
			return batontype.ErrNotAcquired
		}
		return nil
	})
	if err := acquire("n", busy); err != batontype.ErrNotAcquired {
		t.Errorf("contended: %v, want the refusal unwrapped", err)
	}
	if err := acquire("n", boom); err.Error() != `p: acquire "n": boom` || !errors.Is(err, boom) {
		t.Errorf("failure: %v", err)
	}
}
