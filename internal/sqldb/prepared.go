package sqldb

import (
	"context"
	"database/sql"
	"sync/atomic"
)

// Prepared is a DB that runs a fixed set of hot statements as prepared
// statements when the handle is a *sql.DB, and every other statement as
// the handle does.
//
// Why: through the text protocol the server parses each statement at
// every call, and a provider's acquire is long (an upsert with a
// condition per column and a RETURNING list). Prepared, it is parsed once
// per connection of the pool; each call is then one COM_STMT_EXECUTE,
// still one round trip, whatever the DSN's interpolateParams. On MariaDB
// this took the lock cycle from about 0.8 to about 1.0 times a raw
// ShedLock upsert sent as text (docs/benchmarks.md).
//
// A *sql.Tx or *sql.Conn is used as given: a statement prepared on it
// would be bound to that one transaction or connection.
type Prepared struct {
	db  DB
	sql *sql.DB // nil when db is no *sql.DB
	// hot maps each hot statement to its prepared form, nil until
	// prepared. The map is read-only after NewPrepared, so the hot path
	// takes no lock.
	hot map[string]*atomic.Pointer[sql.Stmt]
}

// NewPrepared returns db with the statements hot prepared on first use.
// It does not touch the database.
func NewPrepared(db DB, hot ...string) *Prepared {
	p := &Prepared{db: db, hot: make(map[string]*atomic.Pointer[sql.Stmt], len(hot))}
	p.sql, _ = db.(*sql.DB)
	for _, q := range hot {
		p.hot[q] = new(atomic.Pointer[sql.Stmt])
	}
	return p
}

// stmt returns the prepared form of query, or nil when query is not hot,
// the handle is no *sql.DB, or it cannot be prepared now. In the last
// case the caller runs the text statement, whose error is the one to
// report (a dead server fails it the same way; MySQL's syntax error on
// MariaDB-only SQL is what the providers test for). A failed prepare is
// not remembered: the next call tries again.
func (p *Prepared) stmt(ctx context.Context, query string) *sql.Stmt {
	slot := p.hot[query]
	if slot == nil || p.sql == nil {
		return nil
	}
	if s := slot.Load(); s != nil {
		return s
	}
	s, err := p.sql.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	// Of two concurrent first calls, one keeps its statement.
	if !slot.CompareAndSwap(nil, s) {
		_ = s.Close()
		return slot.Load()
	}
	return s
}

// ExecContext implements DB.
func (p *Prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.db.ExecContext(ctx, query, args...)
}

// QueryContext implements DB.
func (p *Prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

// QueryRowContext implements DB.
func (p *Prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// Close closes the prepared statements (on the server, once each
// connection is idle). The handle itself stays open; a later call
// prepares again.
func (p *Prepared) Close() {
	for _, slot := range p.hot {
		if s := slot.Swap(nil); s != nil {
			_ = s.Close()
		}
	}
}
