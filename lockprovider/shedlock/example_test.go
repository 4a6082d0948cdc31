package shedlock_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/lockprovider/shedlock"
	"github.com/baton-go/baton/scheduler"
)

// A Go replica joins a Java fleet configured with
// JdbcTemplateLockProvider.Configuration.builder().withTableName("shedlock")
// .usingDbTime(), and runs the job the Java code declares as
// @SchedulerLock(name = "report", lockAtMostFor = "PT14M", lockAtLeastFor = "PT14M").
// Compile-only: it needs a PostgreSQL server.
func ExampleNewPostgres() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	p, err := shedlock.NewPostgres(pool, &shedlock.PostgresConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil { // adds the columns ShedLock ignores
		log.Fatal(err)
	}
	sched, err := scheduler.New(p, nil)
	if err != nil {
		log.Fatal(err)
	}
	lk, err := shedlock.SchedulerLock{Name: "report", LockAtMostFor: "PT14M", LockAtLeastFor: "PT14M"}.Parse()
	if err != nil {
		log.Fatal(err)
	}
	_, err = sched.Cron("0 */15 * * * *").Locked(lk.Name, scheduler.Bounds(lk)).Do(func(ctx context.Context, run scheduler.Run) error {
		return nil // the report
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := sched.Start(); err != nil {
		log.Fatal(err)
	}
	defer sched.Close()
}

// A Java fleet on JVM time without forceUtcTimeZone(), in New York, writes
// New York wall-clock times: the Go replicas must be told.
// Compile-only: it needs a PostgreSQL server.
func ExampleClientTimeZone() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	_, err = shedlock.NewPostgres(pool, &shedlock.PostgresConfig{
		TimeMode: shedlock.ClientTimeZone,
		JavaZone: ny,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// A Go replica beside Java replicas using RedisLockProvider(factory, "prod").
// Compile-only: it needs a Redis server.
func ExampleNewRedis() {
	client := goredis.NewClient(&goredis.Options{Addr: "redis.internal:6379"})
	defer client.Close()
	p, err := shedlock.NewRedis(client, &shedlock.RedisConfig{Environment: "prod"})
	if err != nil {
		log.Fatal(err)
	}
	_ = p.Key("report") // "job-lock:prod:report"
}

func ExampleParseDuration() {
	for _, s := range []string{"PT30S", "PT10M", "P1D", "30s", "500"} {
		d, err := shedlock.ParseDuration(s)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(s, d)
	}
	// Output:
	// PT30S 30s
	// PT10M 10m0s
	// P1D 24h0m0s
	// 30s 30s
	// 500 500ms
}
