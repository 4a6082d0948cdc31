// Package synth builds a run ledger of a made-up history in the memory
// provider, for measuring the status page on long ranges (benchmarks and
// the browser test's measurement). It is not a fake: the history is
// written through the memory provider's own AcquireRun and ReleaseRun,
// with its clock moved along the ticks.
package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/status"
)

// Replicas are the LockedBy of the made-up instances.
var Replicas = []string{"app-1", "app-2", "app-3"}

// Week returns a memory provider whose ledger holds jobs jobs ticking
// every period for span up to end, each tick run by one of Replicas for
// 0.2–3 s: about 1 % of runs fail, 0.2 % panic, and each job misses the
// ticks of one 20-tick outage. The registry lists the three instances,
// started span before end. After Week returns, the provider's clock is
// the real one shifted so that end is now.
func Week(jobs int, period, span time.Duration, end time.Time) (*memory.Provider, error) {
	var fake atomic.Int64 // Unix nanoseconds of the fake clock; 0: real clock shifted
	shift := time.Until(end)
	p, err := memory.New(&memory.Config{Now: func() time.Time {
		if n := fake.Load(); n != 0 {
			return time.Unix(0, n)
		}
		return time.Now().Add(shift)
	}})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	start := end.Add(-span).Truncate(period)
	ret := batontype.Retention{MaxRuns: int(span/period) + 10, MaxAge: span + 24*time.Hour}
	rng := rand.New(rand.NewPCG(1, 2))
	var specs []batontype.JobSpec
	for j := range jobs {
		name := fmt.Sprintf("job-%03d", j)
		specs = append(specs, batontype.JobSpec{Name: name, Schedule: "@every " + period.String(), Locked: true, AtMostFor: 5 * time.Minute})
		outage := start.Add(time.Duration(rng.Int64N(int64(span - 30*period)))).Truncate(period)
		for t := start.Add(period); t.Before(end.Add(-period)); t = t.Add(period) {
			if !t.Before(outage) && t.Before(outage.Add(20*period)) {
				continue
			}
			who := Replicas[rng.IntN(len(Replicas))]
			fake.Store(t.Add(time.Duration(rng.IntN(50)) * time.Millisecond).UnixNano())
			owner := lockprovider.NewOwner()
			l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: 5 * time.Minute, Tick: t, LockedBy: who},
				lockprovider.RunStart{Retention: ret})
			if err != nil {
				return nil, err
			}
			out, msg := batontype.OutcomeSucceeded, ""
			switch n := rng.IntN(1000); {
			case n < 2:
				out, msg = batontype.OutcomePanicked, "panic: runtime error: index out of range [3] with length 3"
			case n < 12:
				out, msg = batontype.OutcomeFailed, "upstream: 503 Service Unavailable"
			}
			fake.Store(l.GrantedAt.Add(200*time.Millisecond + time.Duration(rng.IntN(2800))*time.Millisecond).UnixNano())
			err = p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner}, lockprovider.RunEnd{
				Run:     batontype.RunRecord{Job: name, Token: l.Token, Tick: t, LockedBy: who, Started: l.GrantedAt},
				Outcome: out, Error: msg, Retention: ret,
			})
			if err != nil {
				return nil, err
			}
		}
	}
	fake.Store(0)
	for _, r := range Replicas {
		if err := p.Register(ctx, batontype.Instance{LockedBy: r, Started: end.Add(-span), Jobs: specs}, 24*time.Hour); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// WeekPage is the status page over Week(jobs, time.Minute, 7 days, end)
// that computes every request afresh (a Refresh of 1ns), for
// measurements.
func WeekPage(jobs int, end time.Time) (http.Handler, error) {
	p, err := Week(jobs, time.Minute, 7*24*time.Hour, end)
	if err != nil {
		return nil, err
	}
	return status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: p}}, Refresh: time.Nanosecond})
}
