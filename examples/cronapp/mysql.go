package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/lockprovider/mysql"
)

// openMySQL connects to cfg.MySQLURL and returns the MySQL provider of
// the scheduled jobs' locks (-locks mysql), migrated. Migrate is safe to
// run from every replica at once: it serialises itself on the server.
func openMySQL(ctx context.Context, cfg *config, log *slog.Logger) (*mysql.Provider, func(), error) {
	mc, err := gomysql.ParseDSN(cfg.MySQLURL)
	if err != nil {
		return nil, nil, fmt.Errorf("MYSQL_URL: %w", err)
	}
	// One round trip per statement: without it the driver prepares every
	// statement that has arguments.
	mc.InterpolateParams = true
	conn, err := gomysql.NewConnector(mc)
	if err != nil {
		return nil, nil, fmt.Errorf("MYSQL_URL: %w", err)
	}
	db := sql.OpenDB(conn)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("mysql at %s: %w", mc.Addr, err)
	}
	// The rate table is named after the lease table too (the app's rate
	// limit is on PostgreSQL; Migrate creates the table all the same), so
	// that a run's tables and procedures share one prefix.
	p, err := mysql.New(db, &mysql.Config{Table: cfg.mysqlTable(), RateTable: cfg.mysqlTable() + "_rates", Logger: log})
	if err == nil {
		err = p.Migrate(ctx)
	}
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("mysql: %w", err)
	}
	return p, func() { _ = db.Close() }, nil
}
