package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	myprovider "github.com/baton-go/baton/lockprovider/mysql"
)

// The MySQL/MariaDB backend of the CLI, on the private server of
// internal/testenv (or TEST_MYSQL_DSN): the commands themselves run on it
// through cliBackends (TestCLI, TestCLICheckAllRan, ...) and TestCLIControl;
// here are its flag, its hints and the status page.

// mysqlMigrated returns a migrated database of the test's own and the
// flags that point the CLI at it.
func mysqlMigrated(t *testing.T) (*mysqlenv.MY, []string) {
	t.Helper()
	my := mysqlenv.Database(t)
	p, err := myprovider.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return my, []string{"--mysql", my.DSN}
}

// mysqlBackend is mysqlMigrated as a cliBackend.
func mysqlBackend(t *testing.T) cliBackend {
	t.Helper()
	my, args := mysqlMigrated(t)
	p, err := myprovider.New(my.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cliBackend{"mysql", args, p}
}

// dbName is dsn's database.
func dbName(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.DBName
}

// mysqlURL returns dsn as a mysql:// URL, the form people paste.
func mysqlURL(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := "mysql://" + cfg.User
	if cfg.Passwd != "" {
		u += ":" + cfg.Passwd
	}
	return u + "@" + cfg.Addr + "/" + cfg.DBName
}

// A mysql:// URL is taken as the DSN it stands for; a DSN or URL the
// driver cannot read gets a hint, never the password; the environment
// variable works like the flag.
func TestCLIMySQLFlag(t *testing.T) {
	t.Parallel()
	b := mysqlBackend(t)
	seed(t, b.p)
	dsn := b.args[1]
	url := mysqlURL(t, dsn)
	for _, args := range [][]string{{"--mysql", dsn}, {"--mysql", url}, {"--mysql", url + "?timeout=5s"}} {
		out := wantCode(t, exitOK, "", append([]string{"locks", "ls"}, args...)...)
		if !strings.Contains(out, "report") || !strings.Contains(out, "mysql") {
			t.Errorf("locks ls %v:\n%s", args, out)
		}
	}
	// A user whose password holds the DSN's separators, given in a URL,
	// percent-encoded.
	admin := mysqlenv.Open(t, testenv.MySQLDSN(t))
	user := "u_" + testenv.Unique()
	for _, q := range []string{
		"CREATE USER '" + user + "'@'%' IDENTIFIED BY 'p@ss/w:rd?x'",
		"GRANT SELECT, EXECUTE ON `" + dbName(t, dsn) + "`.* TO '" + user + "'@'%'",
	} {
		if _, err := admin.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP USER '"+user+"'@'%'") })
	cfg, _ := gomysql.ParseDSN(dsn)
	if out := wantCode(t, exitOK, "", "locks", "ls", "--mysql", "mysql://"+user+":p%40ss%2Fw%3Ard%3Fx@"+cfg.Addr+"/"+cfg.DBName); !strings.Contains(out, "report") {
		t.Errorf("locks ls as a user with a password of separators:\n%s", out)
	}

	cmd := exec.Command(binary, "limits", "ls")
	cmd.Env = append(os.Environ(), "BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_MYSQL_URL="+url)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "user:42") {
		t.Errorf("limits ls with BATON_MYSQL_URL: %v\n%s", err, out)
	}

	errorLine(t, exitUsage, []string{"is not a DSN", "tcp(127.0.0.1:3306)/DB", "mysql://127.0.0.1:3306/DB"}, nil, "locks", "ls", "--mysql", "127.0.0.1:3306")
	errorLine(t, exitUsage, []string{"tcp(HOST:PORT)"}, []string{"s3cret"}, "locks", "ls", "--mysql", "root:s3cret@127.0.0.1:3306/db")
	errorLine(t, exitUsage, []string{"not a valid DSN"}, []string{"s3cret"}, "locks", "ls", "--mysql", "root:s3cret@tcp(127.0.0.1:3306/db")
	errorLine(t, exitUsage, []string{"not a valid mysql:// URL"}, []string{"s3cret"}, "locks", "ls", "--mysql", "mysql://u:s3cret@[bad/db")
	errorLine(t, exitUsage, []string{`scheme "postgres"`}, []string{"s3cret"}, "locks", "ls", "--mysql", "postgres://u:s3cret@127.0.0.1:5432/db")
	errorLine(t, exitUsage, []string{"names no database"}, nil, "locks", "ls", "--mysql", "root@tcp(127.0.0.1:3306)/")
	errorLine(t, exitUsage, []string{"mysql-table", "Table"}, nil, "locks", "ls", "--mysql", dsn, "--mysql-table", "no-dashes")
	cmd = exec.Command(binary, "locks", "ls")
	cmd.Env = append(os.Environ(), "BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_MYSQL_URL=localhost:3306")
	if out, err := cmd.CombinedOutput(); !strings.Contains(string(out), `$BATON_MYSQL_URL "localhost:3306" is not a DSN`) {
		t.Errorf("BATON_MYSQL_URL without a DSN's form: %v\n%s", err, out)
	}
	// Help never prints the environment's DSN.
	cmd = exec.Command(binary, "locks", "ls", "--help")
	cmd.Env = append(os.Environ(), "BATON_MYSQL_URL=root:s3cret@tcp(127.0.0.1:1)/db")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "s3cret") || !strings.Contains(string(out), "-mysql") {
		t.Errorf("locks ls --help with BATON_MYSQL_URL: %v\n%s", err, out)
	}
}

// Tables that are not there say "run Migrate"; a wrong user or database
// says which, not only "backend unavailable".
func TestCLIMySQLHints(t *testing.T) {
	t.Parallel()
	bare := mysqlenv.Database(t) // not migrated
	missing := []string{"baton: mysql: ", "run Migrate", "database " + bare.Database, "--mysql-table"}
	for _, args := range [][]string{
		{"locks", "ls"}, {"locks", "get", "x"}, {"jobs", "ls"}, {"jobs", "check"}, {"jobs", "runs", "x"}, {"limits", "ls"},
		{"locks", "ls", "--mysql-table", "other_locks"},
	} {
		errorLine(t, exitBackend, missing, nil, append(args, "--mysql", bare.DSN)...)
	}
	cfg, err := gomysql.ParseDSN(bare.DSN)
	if err != nil {
		t.Fatal(err)
	}
	user := *cfg
	user.User, user.Passwd = "no_such_user_"+testenv.Unique(), "s3cret"
	_, errs := errorLine(t, exitBackend, []string{"refused the user or password", "check the user and password in --mysql"}, nil, "locks", "ls", "--mysql", user.FormatDSN())
	if strings.Contains(errs, "s3cret") {
		t.Errorf("the password is echoed:\n%s", errs)
	}
	// A password with the DSN's separators, in a URL, percent-encoded:
	// the server gets it whole and refuses it.
	pwURL := "mysql://no_such_user_" + testenv.Unique() + ":p%40ss%2Fw%3Ard%3Fx@" + cfg.Addr + "/" + bare.Database
	_, errs = errorLine(t, exitBackend, []string{"refused the user or password", "using password: YES"}, nil, "locks", "ls", "--mysql", pwURL)
	if strings.Contains(errs, "p@ss") || strings.Contains(errs, "p%40ss") {
		t.Errorf("the password is echoed:\n%s", errs)
	}
	db := *cfg
	db.DBName = "no_such_db_" + testenv.Unique()
	errorLine(t, exitBackend, []string{"wrong database", "Unknown database", "check the database name in --mysql"}, nil, "jobs", "ls", "--mysql", db.FormatDSN())
	// Nothing listening: the driver's own error, exit 4.
	errorLine(t, exitBackend, []string{"baton: mysql: "}, nil, "locks", "ls", "--mysql", "root@tcp(127.0.0.1:1)/db", "--timeout", "2s")
}

// With Redis and an unmigrated MySQL, Redis's rows still show, with one
// MySQL error line, and the exit code is 4.
func TestCLIMySQLOneBackendFails(t *testing.T) {
	t.Parallel()
	redis := cliBackends(t)[0]
	seed(t, redis.p)
	bare := mysqlenv.Database(t)
	args := append(append([]string{}, redis.args...), "--mysql", bare.DSN)
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"locks", "ls"}, "report"},
		{[]string{"jobs", "ls"}, "nightly"},
		{[]string{"jobs", "check"}, "missed"},
		{[]string{"limits", "ls"}, "user:42"},
	} {
		out, errs := errorLine(t, exitBackend, []string{"baton: mysql: ", "run Migrate"}, []string{"baton: redis"}, append(tc.cmd, args...)...)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v with MySQL failing: Redis rows missing (want %q):\n%s", tc.cmd, tc.want, out)
		}
		if n := strings.Count(errs, "baton: mysql: "); n != 1 {
			t.Errorf("%v: %d MySQL error lines, want 1:\n%s", tc.cmd, n, errs)
		}
	}
}

// baton serve --mysql says what it reached and serves the database's
// jobs and locks.
func TestServeMySQL(t *testing.T) {
	t.Parallel()
	b := mysqlBackend(t)
	seed(t, b.p)
	got, _ := startServe(t, []string{"BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_MYSQL_URL="}, 2,
		"--mysql", b.args[1], "--addr", "127.0.0.1:0")
	if len(got) != 2 || !strings.HasPrefix(got[1], "baton: mysql (database "+dbName(t, b.args[1])+", table baton_locks on 127.0.0.1:") ||
		!strings.Contains(got[1], "): reached: 1 scheduler instances, 1 jobs, 1 locks held") {
		t.Fatalf("baton serve's start lines:\n%s", strings.Join(got, "\n"))
	}
	_, rest, _ := strings.Cut(got[0], "http://")
	base := "http://" + strings.Fields(rest)[0]
	resp, err := http.Get(base + "api/jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var jobs struct {
		Instances []struct {
			LockedBy string `json:"locked_by"`
		} `json:"instances"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jobs); err != nil || len(jobs.Instances) != 1 || jobs.Instances[0].LockedBy != "app-1" {
		t.Errorf("api/jobs on MySQL: %v %+v", err, jobs)
	}
}

// With the three backends at once, every command shows each one's rows,
// each row naming its backend, and a rate-limit key is reset only where
// it is.
func TestCLIThreeBackends(t *testing.T) {
	t.Parallel()
	bs := cliBackends(t)
	var args []string
	for _, b := range bs {
		if _, err := b.p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "on-" + b.name, Owner: lockprovider.NewOwner(), LockedBy: b.name + "-host", AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
		args = append(args, b.args...)
	}
	out := wantCode(t, exitOK, "", append([]string{"locks", "ls", "--wide"}, args...)...)
	for _, b := range bs {
		if !strings.Contains(out, "on-"+b.name) || !strings.Contains(out, b.name+"-host") {
			t.Errorf("locks ls with three backends lacks %s's lock:\n%s", b.name, out)
		}
	}
	my := bs[2]
	if _, err := my.p.(lockprovider.RateLimiter).RateLimit(t.Context(), lockprovider.RateRequest{Key: "only-on-mysql", N: 1, Limits: []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 2, Period: time.Hour}}}); err != nil {
		t.Fatal(err)
	}
	if out := wantCode(t, exitOK, "", append([]string{"limits", "reset", "only-on-mysql"}, args...)...); out != "reset \"only-on-mysql\" on mysql\n" {
		t.Errorf("limits reset of a key on mysql only:\n%s", out)
	}
}
