package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// migrateLock serialises concurrent Migrate calls across processes: it is
// the key of a transaction-level advisory lock, so CREATE ... IF NOT EXISTS
// statements never race (two concurrent CREATE TABLE IF NOT EXISTS can
// otherwise fail on the catalog's unique index).
const migrateLock = "SELECT pg_advisory_xact_lock(hashtext('github.com/baton-go/baton migrate'))"

// Migrate creates or upgrades the provider's tables. Every migration is
// idempotent, and all of them run in one transaction under an advisory
// lock, so running Migrate again, or from several processes at once, is
// safe. The schema named in Config.Schema must exist.
//
// Migrate runs every file of the embedded migrations directory, in name
// order, as one simple-protocol statement batch (one implicit transaction;
// inside the caller's transaction when the DB is a pgx.Tx).
func (p *Provider) Migrate(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(migrateLock)
	b.WriteString(";\n")
	for _, m := range p.migrations {
		fmt.Fprintf(&b, "-- %s\n%s\n;\n", m.name, m.sql)
	}
	if _, err := p.db.Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}

// SchemaSQL returns the DDL that Migrate applies, for users who run their
// own migration tool. It is idempotent.
func (p *Provider) SchemaSQL() string { return schemaText(p.names, p.migrations) }

// SchemaSQL returns the DDL for cfg (nil for the defaults) without a
// connection. It fails only on invalid identifiers.
func SchemaSQL(cfg *Config) (string, error) {
	return sqlprov.Schema(cfg, resolveNames, renderMigrations, schemaText)
}

func schemaText(_ names, migs []migration) string {
	var b strings.Builder
	for _, m := range migs {
		fmt.Fprintf(&b, "-- baton %s\n%s\n", m.name, strings.TrimSpace(m.sql))
		if !strings.HasSuffix(strings.TrimSpace(m.sql), ";") {
			b.WriteString(";")
		}
		b.WriteString("\n")
	}
	return b.String()
}
