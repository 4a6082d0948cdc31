package runner

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/examples/cronapp/internal/localdb"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// The demo with the scheduled jobs' locks on MySQL (-locks mysql): the
// server, the status page's backend, and the cleanup.

const howToGetMySQL = `Point the demo at a MySQL 8 or MariaDB 10.6+ server with MYSQL_URL (or -mysql), a DSN
with a database the user may create tables and procedures in: USER:PASSWORD@tcp(HOST:3306)/DB,
or install the MariaDB server binaries (Debian: apt-get install mariadb-server; the demo then starts a private one).`

// demoDatabase is the database the demo creates on a private server.
const demoDatabase = "cronapp"

// ResolveMySQL finds the MySQL server of -locks mysql: the given DSN,
// which must answer, or else a private server started from the local
// MariaDB binaries, with a database of the demo's own. Unlike Redis and
// PostgreSQL there is no default address to try: a MySQL on
// 127.0.0.1:3306 is no project's test server, and the demo would create
// tables in it.
func ResolveMySQL(ctx context.Context, dsn string, b *Backends, log io.Writer) error {
	if dsn != "" {
		cfg, err := gomysql.ParseDSN(dsn)
		if err != nil {
			return fmt.Errorf("MYSQL_URL: %w\n%s", err, howToGetMySQL)
		}
		if cfg.DBName == "" {
			return fmt.Errorf("MYSQL_URL names no database: the demo's tables go in one\n%s", howToGetMySQL)
		}
		if err := pingMySQL(ctx, dsn, ""); err != nil {
			return fmt.Errorf("MySQL at %s does not answer: %w\n%s", cfg.Addr, err, howToGetMySQL)
		}
		b.MySQLURL = dsn
		return nil
	}
	s, err := localdb.StartMySQL()
	if err != nil {
		return fmt.Errorf("no MySQL: %w\n%s", err, howToGetMySQL)
	}
	b.servers = append(b.servers, s)
	// A server that accepts connections may still be starting up.
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := pingMySQL(ctx, s.URL, demoDatabase)
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("private MySQL at %s not ready: %w", s.URL, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.MySQLURL = s.URL + demoDatabase
	fmt.Fprintf(log, "MySQL: private %s at %s (stopped when the demo ends)\n", s.Name, b.MySQLURL)
	return nil
}

// pingMySQL checks that dsn answers; with create, it creates that
// database first.
func pingMySQL(ctx context.Context, dsn, create string) error {
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return err
	}
	cfg.Timeout = 2 * time.Second
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if create != "" {
		_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+create)
		return err
	}
	return db.PingContext(ctx)
}

// openMySQL returns a handle on dsn, one round trip per statement.
func openMySQL(dsn string) (*sql.DB, error) {
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.InterpolateParams = true
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// mysqlTable is the lease table the replicas of run runID use (cronapp's
// -run-id names it).
func mysqlTable(runID string) string { return "cronapp_" + runID }

// mysqlProvider is the status page's view of the run's job locks on
// MySQL.
func mysqlProvider(db *sql.DB, runID string) (*mysql.Provider, error) {
	return mysql.New(db, &mysql.Config{Table: mysqlTable(runID), RateTable: mysqlTable(runID) + "_rates"})
}

// cleanupMySQL drops the run's tables and procedures: every one is named
// after its lease table (cronapp names its rate table after it too).
func cleanupMySQL(ctx context.Context, dsn, runID string) error {
	db, err := openMySQL(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	prefix := mysqlTable(runID) + "_"
	drop := func(kind, query string, args ...any) error {
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, n := range names {
			// The names come from the server's catalogue and match
			// [a-z0-9_]: the run id's pattern.
			if _, err := db.ExecContext(ctx, "DROP "+kind+" IF EXISTS `"+strings.ReplaceAll(n, "`", "``")+"`"); err != nil {
				return fmt.Errorf("drop %s %s: %w", strings.ToLower(kind), n, err)
			}
		}
		return nil
	}
	like := strings.ReplaceAll(prefix, "_", `\_`) + "%"
	if err := drop("PROCEDURE", "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME LIKE ?",
		like); err != nil {
		return err
	}
	return drop("TABLE", "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME = ? OR TABLE_NAME LIKE ?)",
		mysqlTable(runID), like)
}

// redactDSN drops the password from a DSN.
func redactDSN(dsn string) string {
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	if cfg.Passwd != "" {
		cfg.Passwd = "xxxxx"
	}
	return cfg.FormatDSN()
}
