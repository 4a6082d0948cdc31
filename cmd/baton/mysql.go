package main

import (
	"cmp"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/lockprovider/mysql"
)

// The MySQL/MariaDB backend: its flags, its connection, and what an
// operator can do about its errors. Kept apart from main.go so that the
// other backends' code reads as before.

// mysqlOptions are the flags of the MySQL backend.
type mysqlOptions struct {
	dsn   string // --mysql, or $BATON_MYSQL_URL
	table string // --mysql-table
	// database and addr are the DSN's, once connected: messages name
	// them.
	database, addr string
}

func (o *mysqlOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.dsn, "mysql", o.dsn, "MySQL/MariaDB DSN, USER:PASSWORD@tcp(HOST:3306)/DB, or mysql://USER:PASSWORD@HOST:3306/DB (default $BATON_MYSQL_URL)")
	fs.StringVar(&o.table, "mysql-table", o.table, "lease table of the MySQL provider (the database is the DSN's)")
	// The DSN may carry a password: usage output must not print it.
	fs.Lookup("mysql").DefValue = ""
}

const mysqlExample = "USER:PASSWORD@tcp(HOST:3306)/DB, or mysql://USER:PASSWORD@HOST:3306/DB"

// mysqlConfig parses s, a go-sql-driver DSN or a mysql:// (or mariadb://)
// URL, into the driver's configuration. Its errors are hints that never
// quote s when it may hold a password.
func mysqlConfig(src, s string) (*gomysql.Config, error) {
	var (
		cfg *gomysql.Config
		err error
	)
	scheme, rest, isURL := strings.Cut(s, "://")
	if isURL {
		if scheme != "mysql" && scheme != "mariadb" {
			return nil, fmt.Errorf("%s: scheme %q: want a DSN or mysql://... (e.g. %s)", src, scheme, mysqlExample)
		}
		u, err := url.Parse("mysql://" + rest)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%s is not a valid mysql:// URL (not shown: it may hold a password): want e.g. %s", src, mysqlExample)
		}
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "3306")
		}
		// The credentials are set apart from the DSN's text, which has no
		// escaping: a password may hold any character.
		dsn := "tcp(" + host + ")" + cmp.Or(u.Path, "/")
		if u.RawQuery != "" {
			dsn += "?" + u.RawQuery
		}
		if cfg, err = gomysql.ParseDSN(dsn); err != nil {
			return nil, fmt.Errorf("%s is not a valid mysql:// URL (not shown: it may hold a password): want e.g. %s", src, mysqlExample)
		}
		if u.User != nil {
			cfg.User = u.User.Username()
			cfg.Passwd, _ = u.User.Password()
		}
	} else if cfg, err = gomysql.ParseDSN(s); err != nil {
		if !strings.ContainsAny(s, "@(/") && s != "" {
			return nil, fmt.Errorf("%s %q is not a DSN: did you mean tcp(%s)/DB or mysql://%s/DB? (e.g. %s)", src, s, s, s, mysqlExample)
		}
		if strings.Contains(err.Error(), "default addr for network") {
			return nil, fmt.Errorf("%s: the address must be written tcp(HOST:PORT) in a DSN (not shown: it may hold a password): want e.g. %s", src, mysqlExample)
		}
		return nil, fmt.Errorf("%s is not a valid DSN (not shown: it may hold a password): want e.g. %s", src, mysqlExample)
	}
	if cfg.DBName == "" {
		return nil, fmt.Errorf("%s names no database: baton's tables are in one; put it after the slash (e.g. %s)", src, mysqlExample)
	}
	// One round trip per statement: otherwise the driver prepares every
	// statement that has arguments. Only when the DSN does not say.
	if !strings.Contains(s, "interpolateParams=") {
		cfg.InterpolateParams = true
	}
	return cfg, nil
}

// connectMySQL opens the MySQL backend when --mysql or $BATON_MYSQL_URL
// names one.
func (c *cli) connectMySQL() int {
	o := c.opts.my
	if o.dsn == "" {
		return exitOK
	}
	cfg, err := mysqlConfig(c.source("--mysql", "BATON_MYSQL_URL", o.dsn), o.dsn)
	if err != nil {
		fmt.Fprintf(c.stderr, "baton: %v\n", err)
		return exitUsage
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "baton: mysql: %v\n", err)
		return exitUsage
	}
	db := sql.OpenDB(conn)
	p, err := mysql.New(db, &mysql.Config{Table: o.table})
	if err != nil {
		_ = db.Close()
		fmt.Fprintf(c.stderr, "baton: mysql: %v (check --mysql-table)\n", err)
		return exitUsage
	}
	c.opts.my.database, c.opts.my.addr = cfg.DBName, cfg.Addr
	c.backends = append(c.backends, backend{name: "mysql", p: p, close: func() { _ = db.Close() }})
	return exitOK
}

// explainMySQL leads err with what to do about it when it is a refusal an
// operator can fix; ok is false for other errors.
func (c *cli) explainMySQL(err error) (string, bool) {
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		return "", false
	}
	msg := err.Error()
	switch me.Number {
	case 1146, 1305: // ER_NO_SUCH_TABLE, ER_SP_DOES_NOT_EXIST (the procedures)
		return fmt.Sprintf("baton's tables are not in database %s (%s): run Migrate (mysql.Provider.Migrate) on this database, or check the database in --mysql and --mysql-table; %s",
			c.opts.my.database, me.Message, msg), true
	case 1045: // ER_ACCESS_DENIED_ERROR
		return fmt.Sprintf("the server refused the user or password: %s; check the user and password in --mysql; %s", me.Message, msg), true
	case 1049: // ER_BAD_DB_ERROR
		return fmt.Sprintf("wrong database: %s; check the database name in --mysql; %s", me.Message, msg), true
	case 1044: // ER_DBACCESS_DENIED_ERROR
		return fmt.Sprintf("the user may not use this database: %s; check the database name in --mysql, or grant the user access to it; %s", me.Message, msg), true
	case 1142, 1370: // ER_TABLEACCESS_DENIED_ERROR, ER_PROCACCESS_DENIED_ERROR
		return fmt.Sprintf("the user lacks a privilege: %s; grant it on baton's tables and procedures (SELECT, INSERT, UPDATE, DELETE, EXECUTE) or use the application's user; %s", me.Message, msg), true
	}
	return "", false
}

// readsMySQL is reads for the MySQL backend: the database, the table and
// the server, never the DSN (it may hold a password).
func (c *cli) readsMySQL() string {
	return fmt.Sprintf("database %s, table %s on %s", c.opts.my.database, cmp.Or(c.opts.my.table, mysql.DefaultTable), c.opts.my.addr)
}

// mysqlEnv is the MySQL backend's environment variable, read at start
// like BATON_REDIS_URL and BATON_POSTGRES_URL.
func mysqlEnv() mysqlOptions { return mysqlOptions{dsn: os.Getenv("BATON_MYSQL_URL")} }
