package pglease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// Querier runs a statement that returns one row.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Execer runs a statement for its row count.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Extend runs the extension sql for e, after opts (pgx query options such
// as a pgx.QueryExecMode). A lease not held is batontype.ErrNotHeld;
// a failed statement's error is passed through wrap.
func Extend(ctx context.Context, db Querier, sql string, e lockprovider.ExtendParams, wrap func(error) error, opts ...any) (batontype.Lease, error) {
	var (
		at, until, atLeast time.Time
		fence              int64
		lastTick           pgtype.Timestamptz
	)
	args := append(opts, e.Name, e.Owner, e.AtMostFor, e.AtLeastFor)
	err := db.QueryRow(ctx, sql, args...).Scan(&at, &until, &atLeast, &fence, &lastTick)
	if errors.Is(err, pgx.ErrNoRows) {
		return batontype.Lease{}, batontype.ErrNotHeld
	}
	if err != nil {
		return batontype.Lease{}, wrap(err)
	}
	l := batontype.Lease{Name: e.Name, Owner: e.Owner, Token: fence, GrantedAt: at, Until: until, AtLeastUntil: atLeast}
	if lastTick.Valid {
		l.Tick = lastTick.Time
	}
	return l, nil
}

// Release runs the release sql for r. No row changed is
// batontype.ErrNotHeld; a failed statement's error is passed through
// wrap.
func Release(ctx context.Context, db Execer, sql string, r lockprovider.ReleaseParams, wrap func(error) error) error {
	tag, err := db.Exec(ctx, sql, r.Name, r.Owner)
	if err != nil {
		return wrap(err)
	}
	if tag.RowsAffected() == 0 {
		return batontype.ErrNotHeld
	}
	return nil
}

// Contended returns, for an error that means another session was in the
// way and the statement changed nothing, batontype.ErrNotAcquired
// annotated with the SQLSTATE; for any other error it returns nil. Those
// errors are a locked row (55P03, from NOWAIT or lock_timeout), a
// serialization failure (40001) and a deadlock (40P01).
func Contended(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return nil
	}
	switch pgErr.Code {
	case "55P03", "40001", "40P01":
		return fmt.Errorf("%w (SQLSTATE %s)", batontype.ErrNotAcquired, pgErr.Code)
	}
	return nil
}

// DB is the part of pgx the PostgreSQL providers use. *pgxpool.Pool,
// *pgx.Conn and pgx.Tx satisfy it.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Conn adapts a DB to sqlprov.Conn. Its no-row error is pgx.ErrNoRows.
type Conn struct{ DB DB }

// QueryRow implements sqlprov.Conn.
func (c Conn) QueryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return c.DB.QueryRow(ctx, sql, args...).Scan(dest...)
}

// Query implements sqlprov.Conn.
func (c Conn) Query(ctx context.Context, sql string, args []any, dest []any, row func() error) error {
	rows, err := c.DB.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	_, err = pgx.ForEachRow(rows, dest, row)
	return err
}

// Exec implements sqlprov.Conn.
func (c Conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := c.DB.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}
