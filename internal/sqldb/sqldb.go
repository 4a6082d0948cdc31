// Package sqldb is what the providers on database/sql (lockprovider/mysql
// and the MySQL mode of lockprovider/shedlock) take of it: the handle's
// interface, and its adapter to sqlprov.Conn. It names no driver: the
// application opens the handle with the driver of its choice.
package sqldb

import (
	"context"
	"database/sql"
)

// DB is the part of database/sql a provider uses. *sql.DB, *sql.Conn and
// *sql.Tx satisfy it.
type DB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Conn adapts a DB to sqlprov.Conn. Its no-row error is sql.ErrNoRows.
type Conn struct{ DB DB }

// QueryRow implements sqlprov.Conn.
func (c Conn) QueryRow(ctx context.Context, query string, args []any, dest ...any) error {
	return c.DB.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// Query implements sqlprov.Conn.
func (c Conn) Query(ctx context.Context, query string, args []any, dest []any, row func() error) error {
	rows, err := c.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if err := row(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Exec implements sqlprov.Conn.
func (c Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.DB.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
