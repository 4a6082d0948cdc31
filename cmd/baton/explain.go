package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// What an operator can do about a backend's error, for the errors whose
// driver text does not say it: a URL without a scheme, tables that are
// not there, a role, password or database the server refuses.

// urlHint explains why url, given to flag (--redis or --postgres, or
// their environment variables), could not be parsed. The URL is echoed only when it carries no credentials
// (no "@"): the driver's own message quotes it whole, password included.
func urlHint(flag, url string) string {
	scheme, example := "redis://", "redis://127.0.0.1:6379/0, rediss:// for TLS"
	if strings.Contains(flag, "postgres") || strings.Contains(flag, "POSTGRES") {
		scheme, example = "postgres://", "postgres://USER@127.0.0.1:5432/DB?sslmode=disable, or key=value pairs: host=... user=..."
	}
	if !strings.Contains(url, "://") && !strings.ContainsAny(url, "@= ") && url != "" {
		return fmt.Sprintf("%s %q has no scheme: did you mean %s%s? (e.g. %s)", flag, url, scheme, url, example)
	}
	return fmt.Sprintf("%s is not a valid URL (not shown: it may hold a password): want e.g. %s", flag, example)
}

// explain returns err's text, led by what to do about it when err is one
// of the refusals an operator can fix by pointing the CLI elsewhere.
func (c *cli) explain(b backend, err error) string {
	if b.name == "mysql" {
		if s, ok := c.explainMySQL(err); ok {
			return s
		}
	}
	msg := err.Error()
	var pe *pgconn.PgError
	if b.name == "postgres" && errors.As(err, &pe) {
		switch pe.Code {
		case "42P01", "3F000": // undefined_table, invalid_schema_name
			schema := c.opts.pgSchema
			if schema == "" {
				schema = "the search_path"
			}
			return fmt.Sprintf("baton's tables are not in %s (%s): run Migrate (postgres.Provider.Migrate) on this database, or check --pg-schema and --pg-table; %s",
				schema, pe.Message, msg)
		case "28000", "28P01": // invalid_authorization_specification, invalid_password
			return fmt.Sprintf("the server refused the role: %s; check the user and password in --postgres; %s", pe.Message, msg)
		case "3D000": // invalid_catalog_name
			return fmt.Sprintf("wrong database: %s; check the database name in --postgres; %s", pe.Message, msg)
		case "42501": // insufficient_privilege
			return fmt.Sprintf("the role lacks a privilege: %s; grant it on baton's tables or use the application's role; %s", pe.Message, msg)
		}
	}
	if b.name == "redis" {
		switch {
		case strings.Contains(msg, "NOAUTH"):
			return "Redis wants a password: put it in --redis (redis://:PASSWORD@HOST:6379/0); " + msg
		case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "invalid password"), strings.Contains(msg, "invalid username-password"):
			return "Redis refused the user or password in --redis; " + msg
		case strings.Contains(msg, "DB index is out of range"):
			return "wrong database: the number after the port in --redis (redis://HOST:6379/N) does not exist on this server; " + msg
		}
	}
	return msg
}
