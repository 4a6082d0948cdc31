// Package shedlockmysqltest holds the tests of package shedlock's MySQL
// mode, which need a MySQL driver. They live here, not beside the package,
// because `go mod tidy` in a module that imports shedlock also loads its
// tests: kept there, they would make every Postgres- or Redis-only user of
// shedlock download go-sql-driver/mysql. Nothing imports this package.
package shedlockmysqltest
