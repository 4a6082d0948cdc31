package pgerr_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-go/baton/internal/backenderr/pgerr"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestClassify(t *testing.T) {
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
		u, n := pgerr.Classify(tc.err)
		if u != tc.unavailable || n != tc.notSent {
			t.Errorf("Classify(%v) = %v, %v; want %v, %v", tc.err, u, n, tc.unavailable, tc.notSent)
		}
	}
}
