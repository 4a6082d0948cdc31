// Package sqlprov holds what the SQL providers (lockprovider/postgres and
// lockprovider/mysql) do alike above their drivers, written once:
//
//   - the default table names and their resolution (Tables);
//   - the setup before a connection: the handle checked, the names
//     resolved from the config, the migrations read and rendered (New,
//     Schema, Files, Render);
//   - the one-statement operations whose logic does not depend on the
//     driver (Ops: validate, run, map "no row" or "no row changed" to the
//     typed error, wrap a failure with the provider's prefix), over Conn,
//     which each provider implements with its driver in a few lines.
//
// Each provider keeps its SQL, its argument encoding and its decoding of
// driver-specific column types. The ShedLock-compatible provider
// (lockprovider/shedlock) uses Render and DefaultTable. The package names
// no driver: a consumer of one provider compiles no other provider's
// driver. The adapters to Conn are in sqldb (database/sql) and pglease
// (pgx).
package sqlprov
