package shedlock

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"
)

// The MySQL mode's classification without a driver: what database/sql
// and go-sql-driver/mysql return, as texts and sentinels.
func TestClassifySQL(t *testing.T) {
	for _, c := range []struct {
		err                  error
		unavailable, notSent bool
	}{
		{driver.ErrBadConn, true, true},
		{sql.ErrConnDone, true, true},
		{errors.New("sql: database is closed"), true, true},
		{errors.New("invalid connection"), true, false},
		{fmt.Errorf("wrapped: %w", io.ErrUnexpectedEOF), true, false},
		{context.DeadlineExceeded, true, false},
		{errors.New("Error 1053 (08S01): Server shutdown in progress"), true, false},
		{errors.New("Error 1927 (70100): Connection was killed"), true, false},
		{context.Canceled, false, false},
		{errors.New("Error 1062 (23000): Duplicate entry 'x' for key 'PRIMARY'"), false, false},
		{errors.New("Error 10530 (HY000): something else"), false, false},
	} {
		u, n := classifySQL(c.err)
		if u != c.unavailable || n != c.notSent {
			t.Errorf("classifySQL(%v) = %v, %v; want %v, %v", c.err, u, n, c.unavailable, c.notSent)
		}
	}
}
