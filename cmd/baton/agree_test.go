package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/status"
)

// The status page, jobs ls and jobs check give every job of a mixed
// fleet the same state at the same moment, on every backend: succeeding,
// failing, panicking, overrunning its lease (lock lost), paused, unlocked
// and unlocked failing on a replica, running, missed, a run whose replica
// died (its lease ended, the run never did) and a tick missed behind a
// run still open.
func TestPageAndCLIAgree(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := t.Context()
			now := time.Now()
			due := now.Add(-12 * time.Hour).Truncate(time.Second)
			offset := time.Duration(due.UnixNano() % int64(24*time.Hour))
			daily := "@every 24h0m0s offset " + offset.String()
			hourly := now.Add(-30 * time.Minute).Truncate(time.Second)
			hourlyOff := time.Duration(hourly.UnixNano() % int64(time.Hour))
			spec := func(name, sched string, locked bool) batontype.JobSpec {
				return batontype.JobSpec{Name: name, Schedule: sched, Locked: locked, AtMostFor: time.Hour}
			}
			inst := batontype.Instance{LockedBy: "app-1", Version: "v1", Started: now.Add(-72 * time.Hour), Jobs: []batontype.JobSpec{
				spec("ok", daily, true), spec("failing", daily, true), spec("missed", daily, true), spec("dead", daily, true),
				spec("blocked", "@every 1h0m0s offset "+hourlyOff.String(), true),
				spec("running", daily, true), spec("paused", daily, true), spec("unlocked", daily, false),
				spec("panicking", daily, true), spec("overran", daily, true),
				func() batontype.JobSpec {
					// Unlocked, failing on this replica: its last run is
					// in the registry, not the ledger.
					j := spec("unlocked-failing", daily, false)
					j.LastRun = &batontype.RunRecord{Job: j.Name, LockedBy: "app-1", Tick: due, Started: due, Finished: due.Add(time.Second), Outcome: batontype.OutcomeFailed, Error: "boom"}
					return j
				}(),
			}}
			if err := s.p.(lockprovider.Registry).Register(ctx, inst, time.Minute); err != nil {
				t.Fatal(err)
			}
			led := s.p.(lockprovider.Ledger)
			start := func(job string, tick time.Time) (lockprovider.AcquireParams, batontype.Lease) {
				ap := lockprovider.AcquireParams{Name: job, Owner: lockprovider.NewOwner(), LockedBy: "app-1", AtMostFor: time.Hour, Tick: tick}
				l, err := led.AcquireRun(ctx, ap, lockprovider.RunStart{})
				if err != nil {
					t.Fatalf("%s: %v", job, err)
				}
				return ap, l
			}
			end := func(job string, tick time.Time, out batontype.Outcome) {
				ap, l := start(job, tick)
				if err := led.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: job, Owner: ap.Owner}, lockprovider.RunEnd{
					Run: batontype.RunRecord{Job: job, Token: l.Token, Tick: tick, LockedBy: "app-1", Started: l.GrantedAt}, Outcome: out, Error: "boom"}); err != nil {
					t.Fatal(err)
				}
			}
			// A replica that died mid-run: its lease is gone (an
			// operator freed it), its run never ended.
			die := func(job string, tick time.Time) batontype.Lease {
				ap, l := start(job, tick)
				if err := s.p.Release(ctx, lockprovider.ReleaseParams{Name: job, Owner: ap.Owner}); err != nil {
					t.Fatal(err)
				}
				return l
			}
			end("ok", due, batontype.OutcomeSucceeded)
			end("failing", due, batontype.OutcomeFailed)
			end("panicking", due, batontype.OutcomePanicked)
			end("overran", due, batontype.OutcomeLockLost) // ran past its lease
			die("dead", due)
			start("running", due)
			// The hourly job's run of the tick before stayed open past
			// its latest due tick: that run, still holding the lease,
			// kept the tick from being claimed.
			start("blocked", hourly.Add(-time.Hour))
			if err := s.p.(lockprovider.Control).SetPaused(ctx, "paused", true); err != nil {
				t.Fatal(err)
			}

			want := map[string]string{"ok": "ok", "failing": "failed", "missed": "missed", "dead": "unfinished", "blocked": "missed",
				"running": "running", "paused": "paused", "unlocked": "unlocked",
				"panicking": "failed", "overran": "failed", "unlocked-failing": "failed"}
			var ls []struct{ Name, State string }
			if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "ls", "-o", "json"}, s.args...)...)), &ls); err != nil {
				t.Fatal(err)
			}
			var check []struct {
				Problems []struct{ Job, Kind string }
			}
			if err := json.Unmarshal([]byte(wantCode(t, exitProblem, "", append([]string{"jobs", "check", "-o", "json"}, s.args...)...)), &check); err != nil {
				t.Fatal(err)
			}
			h, err := status.New(&status.Config{Backends: []status.Backend{{Name: s.name, Provider: s.p}}})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/jobs", nil)
			h.ServeHTTP(rec, req)
			var page struct {
				Jobs []struct{ Name, State string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("page: %d %v\n%s", rec.Code, err, rec.Body)
			}

			got := map[string][3]string{}
			for _, j := range ls {
				g := got[j.Name]
				g[0] = j.State
				got[j.Name] = g
			}
			for _, j := range page.Jobs {
				g := got[j.Name]
				g[1] = j.State
				got[j.Name] = g
			}
			// jobs check: its verdict on each job's latest due tick; no
			// problem reads ok (or running, paused, unlocked: not its
			// business).
			verdict := map[string]string{}
			for _, c := range check {
				for _, p := range c.Problems {
					verdict[p.Job] = p.Kind
				}
			}
			for job, st := range want {
				g := got[job]
				g[2] = verdict[job]
				if g[2] == "" {
					g[2] = "-"
				}
				checkOK := g[2] == st || g[2] == "-" && (st == "ok" || st == "running" || st == "paused" || st == "unlocked" || job == "unlocked-failing")
				if g[0] != st || g[1] != st || !checkOK {
					t.Errorf("%s: jobs ls %q, page %q, jobs check %q; want %q", job, g[0], g[1], g[2], st)
				}
			}
		})
	}
}
