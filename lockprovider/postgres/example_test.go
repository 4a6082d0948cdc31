package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
)

// Compile-only: it needs a PostgreSQL server.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	p, err := postgres.New(pool, &postgres.Config{Schema: "ops", Table: "job_locks"})
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
