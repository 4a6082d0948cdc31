package schedulertest

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

// controlProviders returns two providers on one fresh backend namespace.
func controlProviders(b *testing.B, backend string) (lockprovider.Provider, lockprovider.Provider) {
	switch backend {
	case "redis":
		c, prefix := redisenv.Client(b), testenv.Prefix(b)
		return must(redisprovider.New(c, &redisprovider.Config{Prefix: prefix})), must(redisprovider.New(c, &redisprovider.Config{Prefix: prefix}))
	default:
		pg := pgenv.Schema(b)
		p := must(pgprovider.New(pg.Pool, nil))
		if err := p.Migrate(b.Context()); err != nil {
			b.Fatal(err)
		}
		return p, must(pgprovider.New(pg.Pool, nil))
	}
}

// BenchmarkControlPropagation measures, through the backend's
// announcements, the time from a cluster-wide pause (or resume) made by
// one scheduler to another scheduler's job seeing it (pause), and from a
// run request stored by a third party to the job's manual run starting
// on a scheduler (request). ControlPoll is left at 5s, so the figures show
// the announcement path.
//
//	go test -run '^$' -bench ControlPropagation -benchtime 50x ./scheduler/
func BenchmarkControlPropagation(b *testing.B) {
	for _, backend := range []string{"redis", "postgres"} {
		b.Run(backend+"/pause", func(b *testing.B) {
			pa, pb := controlProviders(b, backend)
			a, err := scheduler.New(pa, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			other, err := scheduler.New(pb, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer other.Close()
			job, err := a.Every(time.Hour).Locked("job", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range []*scheduler.Scheduler{a, other} {
				if err := s.Start(); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(200 * time.Millisecond) // subscriptions in place
			b.ResetTimer()
			for i := range b.N {
				pause := i%2 == 0
				var err error
				if pause {
					err = other.Pause(b.Context(), "job")
				} else {
					err = other.Resume(b.Context(), "job")
				}
				if err != nil {
					b.Fatal(err)
				}
				deadline := time.Now().Add(10 * time.Second)
				for job.Paused() != pause {
					if time.Now().After(deadline) {
						b.Fatal("not seen within 10s")
					}
					time.Sleep(50 * time.Microsecond)
				}
			}
		})
		b.Run(backend+"/request", func(b *testing.B) {
			pa, pb := controlProviders(b, backend)
			a, err := scheduler.New(pa, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			started := make(chan struct{}, 1)
			if _, err := a.Every(time.Hour).Locked("job", scheduler.AtMostFor(time.Minute)).Do(func(context.Context, scheduler.Run) error {
				started <- struct{}{}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			if err := a.Start(); err != nil {
				b.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			ctl := pb.(lockprovider.Control)
			b.ResetTimer()
			for range b.N {
				if _, err := ctl.RequestRun(b.Context(), batontype.RunRequest{Job: "job"}); err != nil {
					b.Fatal(err)
				}
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					b.Fatal("no run within 10s")
				}
			}
		})
	}
}
