package shedlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// A backend nobody listens on is unavailability, never a refusal.
func TestUnreachableBackendIsUnavailable(t *testing.T) {
	t.Parallel()
	port := testenv.FreePort(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()

	pool, err := pgxpool.New(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/test?sslmode=disable&connect_timeout=2", port))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pg, err := shedlock.NewPostgres(pool, &shedlock.PostgresConfig{TimeMode: shedlock.DBTime, Columns: shedlock.Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	rc := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	defer rc.Close()
	rd, err := shedlock.NewRedis(rc, &shedlock.RedisConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []lockprovider.Provider{pg, rd} {
		_, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
		if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotAcquired) {
			t.Errorf("%T: Acquire on a closed port: %v, want ErrUnavailable", p, err)
		}
		err = p.Release(ctx, lockprovider.ReleaseParams{Name: "job", Owner: "o"})
		if !errors.Is(err, batontype.ErrUnavailable) || errors.Is(err, batontype.ErrNotHeld) {
			t.Errorf("%T: Release on a closed port: %v, want ErrUnavailable", p, err)
		}
	}
}
