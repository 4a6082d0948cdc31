package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// migrateLockName prefixes the GET_LOCK name that serialises concurrent
// Migrate calls across processes, so that two never replace the same
// procedure at once. A hash of the qualified table name follows: lock
// names are limited to 64 characters.
const migrateLockName = "baton:migrate:"

// procMarker precedes the characteristics of every procedure; Migrate
// writes the hash of the procedure's text into its COMMENT before it.
const procMarker = "SQL SECURITY INVOKER"

// Migrate creates or upgrades the provider's tables and stored procedures.
// It is idempotent and serialised across processes by a named lock
// (GET_LOCK), so running it again, or from several processes at once, is
// safe. The database named in Config.Database must exist, and the user
// needs the CREATE, ALTER, ALTER ROUTINE and CREATE ROUTINE privileges
// (ALTER for a table an older version made, see 006_run_release.sql and
// 007_release_count.sql).
//
// MySQL commits DDL at once, so unlike on PostgreSQL the migration is not
// one transaction: each statement is idempotent instead. A procedure is
// replaced (dropped and created) only when its text changed, which the
// hash in its COMMENT tells; an unchanged schema costs one query. Do not
// pass a *sql.Tx: DDL would commit it.
func (p *Provider) Migrate(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	db := p.db
	// A named lock belongs to a connection: pin one.
	if c, ok := p.db.(interface {
		Conn(context.Context) (*sql.Conn, error)
	}); ok {
		conn, err := c.Conn(ctx)
		if err != nil {
			return opError("migrate", "", err)
		}
		defer conn.Close()
		db = conn
	}
	sum := sha256.Sum256([]byte(p.names.Locks))
	lockName := migrateLockName + hex.EncodeToString(sum[:16])
	var got sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", lockName).Scan(&got); err != nil {
		return opError("migrate", "", err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("mysql: migrate: another Migrate held the lock %q for 60s", lockName)
	}
	defer func() {
		_, _ = db.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK(?)", lockName)
	}()

	have, err := p.procHashes(ctx, db)
	if err != nil {
		return opError("migrate", "", err)
	}
	for _, m := range p.migrations {
		for _, s := range m.stmts {
			if s.proc == "" {
				if _, err := db.ExecContext(ctx, s.sql); err != nil {
					return fmt.Errorf("mysql: migrate %s: %w", m.name, err)
				}
				continue
			}
			sum := hashOf(s.sql)
			if have[s.proc] == sum {
				continue
			}
			drop := "DROP PROCEDURE IF EXISTS " + qualify(p.names.Database, s.proc)
			if _, err := db.ExecContext(ctx, drop); err != nil {
				return fmt.Errorf("mysql: migrate %s: %w", m.name, err)
			}
			if _, err := db.ExecContext(ctx, withHash(s.sql, sum)); err != nil {
				return fmt.Errorf("mysql: migrate %s: procedure %s: %w", m.name, s.proc, err)
			}
		}
	}
	return nil
}

// procHashes reads the hashes Migrate wrote into the COMMENT of the
// procedures that exist.
func (p *Provider) procHashes(ctx context.Context, db DB) (map[string]string, error) {
	q := "SELECT ROUTINE_NAME, ROUTINE_COMMENT FROM information_schema.ROUTINES " +
		"WHERE ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_SCHEMA = DATABASE()"
	var args []any
	if p.names.Database != "" {
		q = strings.Replace(q, "DATABASE()", "?", 1)
		args = append(args, p.names.Database)
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]string{}
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, err
		}
		have[name] = strings.TrimPrefix(comment, "baton ")
	}
	return have, rows.Err()
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:12])
}

// withHash puts the hash into the procedure's COMMENT.
func withHash(s, sum string) string {
	return strings.Replace(s, procMarker, "COMMENT 'baton "+sum+"' "+procMarker, 1)
}

// SchemaSQL returns the DDL that Migrate applies, for users who run their
// own migration tool, in the form the mysql and mariadb clients read
// (DELIMITER // around the procedures). Running it replaces the
// procedures; it is otherwise idempotent.
func (p *Provider) SchemaSQL() string { return schemaText(p.names, p.migrations) }

// SchemaSQL returns the DDL for cfg (nil for the defaults) without a
// connection. It fails only on invalid identifiers.
func SchemaSQL(cfg *Config) (string, error) {
	return sqlprov.Schema(cfg, resolveNames, renderMigrations, schemaText)
}

func schemaText(n names, migs []migration) string {
	var b strings.Builder
	b.WriteString("DELIMITER //\n")
	for _, m := range migs {
		fmt.Fprintf(&b, "-- baton %s\n", m.name)
		for _, s := range m.stmts {
			if s.proc != "" {
				fmt.Fprintf(&b, "DROP PROCEDURE IF EXISTS %s\n//\n%s\n//\n", qualify(n.Database, s.proc), withHash(s.sql, hashOf(s.sql)))
				continue
			}
			fmt.Fprintf(&b, "%s\n//\n", s.sql)
		}
	}
	b.WriteString("DELIMITER ;\n")
	return b.String()
}
