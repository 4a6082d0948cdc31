package myerr_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/backenderr/myerr"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err                  error
		unavailable, notSent bool
	}{
		{driver.ErrBadConn, true, true},
		{fmt.Errorf("x: %w", sql.ErrConnDone), true, true},
		{errors.New("sql: database is closed"), true, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true, false},
		{gomysql.ErrInvalidConn, true, false},
		{&gomysql.MySQLError{Number: 1053}, true, false},
		{&gomysql.MySQLError{Number: 1062}, false, false},
		{io.ErrUnexpectedEOF, true, false},
		{context.DeadlineExceeded, true, false},
		{context.Canceled, false, false},
		{errors.New("other"), false, false},
	} {
		u, n := myerr.Classify(tc.err)
		if u != tc.unavailable || n != tc.notSent {
			t.Errorf("Classify(%v) = %v, %v; want %v, %v", tc.err, u, n, tc.unavailable, tc.notSent)
		}
	}
}

func TestContended(t *testing.T) {
	for _, n := range []uint16{1205, 1213, 3572} {
		if err := myerr.Contended(fmt.Errorf("call: %w", &gomysql.MySQLError{Number: n})); !errors.Is(err, batontype.ErrNotAcquired) {
			t.Errorf("Contended(error %d) = %v, want ErrNotAcquired", n, err)
		}
	}
	for _, err := range []error{&gomysql.MySQLError{Number: 1062}, errors.New("other"), nil} {
		if got := myerr.Contended(err); got != nil {
			t.Errorf("Contended(%v) = %v, want nil", err, got)
		}
	}
}

func TestSyntaxError(t *testing.T) {
	if !myerr.SyntaxError(fmt.Errorf("query: %w", &gomysql.MySQLError{Number: 1064})) {
		t.Error("SyntaxError(error 1064) = false")
	}
	for _, err := range []error{&gomysql.MySQLError{Number: 1205}, errors.New("other"), nil} {
		if myerr.SyntaxError(err) {
			t.Errorf("SyntaxError(%v) = true", err)
		}
	}
}
