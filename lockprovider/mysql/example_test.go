package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// Compile-only: it needs a MySQL or MariaDB server.
func Example() {
	ctx := context.Background()
	cfg, err := gomysql.ParseDSN("app:secret@tcp(db.internal:3306)/app")
	if err != nil {
		log.Fatal(err)
	}
	cfg.InterpolateParams = true // one round trip per operation
	cfg.ReadTimeout, cfg.WriteTimeout = 10*time.Second, 10*time.Second
	connector, err := gomysql.NewConnector(cfg)
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()

	p, err := mysql.New(db, &mysql.Config{Table: "job_locks"})
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil { // or apply p.SchemaSQL() yourself
		log.Fatal(err)
	}

	owner := lockprovider.NewOwner()
	lease, err := p.Acquire(ctx, lockprovider.AcquireParams{
		Name: "nightly-report", Owner: owner,
		AtMostFor: 10 * time.Minute, AtLeastFor: time.Minute,
	})
	if errors.Is(err, batontype.ErrNotAcquired) {
		return // another replica runs it
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fencing token", lease.Token)
	// ... do the work, passing lease.Token to the resource ...
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "nightly-report", Owner: owner}); err != nil {
		log.Print(err)
	}
}
