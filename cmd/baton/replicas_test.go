package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/status"
)

// replicas ls tells a replica that died (gone, with the run it left
// open) from one that shut down (left) and the live ones.
func TestCLIReplicas(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := t.Context()
			reg := s.p.(lockprovider.Registry)
			job := batontype.JobSpec{Name: "nightly", Schedule: "@every 24h0m0s", Locked: true, AtMostFor: time.Hour}
			for _, r := range []struct {
				name string
				ttl  time.Duration
			}{{"r1", time.Minute}, {"r2", time.Second}, {"r3", time.Minute}} {
				jobs := []batontype.JobSpec{job}
				if r.name == "r2" { // a job only the replica that dies runs
					jobs = append(jobs, batontype.JobSpec{Name: "solo", Schedule: "@every 24h0m0s", Locked: true, AtMostFor: time.Hour})
				}
				if err := reg.Register(ctx, batontype.Instance{LockedBy: r.name, Version: "v1", Started: time.Now(), Jobs: jobs}, r.ttl); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.p.(lockprovider.Ledger).AcquireRun(ctx, lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), LockedBy: "r2",
				AtMostFor: time.Hour, Tick: time.Now().Truncate(time.Second)}, lockprovider.RunStart{})
			if err != nil {
				t.Fatal(err)
			}
			if err := reg.Deregister(ctx, "r3"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1100 * time.Millisecond) // r2's 1 s TTL passes without a heartbeat: it died
			var rs []struct {
				LockedBy string `json:"locked_by"`
				State    string `json:"state"`
				Running  []struct{ Token int64 }
			}
			if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"replicas", "ls", "-o", "json"}, s.args...)...)), &rs); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rs {
				got[r.LockedBy] = r.State
				if r.LockedBy == "r2" && (len(r.Running) != 1 || r.Running[0].Token != l.Token) {
					t.Errorf("r2 gone: running %+v, want its open run (token %d)", r.Running, l.Token)
				}
			}
			if got["r1"] != "alive" || got["r2"] != "gone" || got["r3"] != "left" || len(got) != 3 {
				t.Errorf("replicas ls: %v; want r1 alive, r2 gone, r3 left", got)
			}
			// The status page: the same states, and the dead replica
			// counts in the job's replicas (1/2), the one that left not.
			h, err := status.New(&status.Config{Backends: []status.Backend{{Name: s.name, Provider: s.p}}})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/jobs", nil))
			var page struct {
				Jobs []struct {
					Name      string
					Replicas  []string
					Gone      []string
					Instances int
				}
				Instances []struct {
					LockedBy string `json:"locked_by"`
					State    string
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
				t.Fatal(err)
			}
			pageStates := map[string]string{}
			for _, in := range page.Instances {
				pageStates[in.LockedBy] = in.State
			}
			if fmt.Sprint(pageStates) != fmt.Sprint(got) {
				t.Errorf("page instances %v, replicas ls %v", pageStates, got)
			}
			if len(page.Jobs) != 2 || page.Jobs[0].Name != "nightly" || len(page.Jobs[0].Replicas) != 1 || page.Jobs[0].Instances != 2 ||
				page.Jobs[1].Name != "solo" || len(page.Jobs[1].Replicas) != 0 || fmt.Sprint(page.Jobs[1].Gone) != "[r2]" {
				t.Errorf("page jobs %+v: want nightly on 1 of 2 replicas (r1 alive, r2 gone), and solo still listed, gone with r2", page.Jobs)
			}
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/job?backend="+s.name+"&name=solo", nil))
			if rec.Code != http.StatusOK {
				t.Errorf("the job page of a job whose replica died: %d %s", rec.Code, rec.Body)
			}
			var ls []struct {
				Name string
				Gone []string
			}
			if err := json.Unmarshal([]byte(wantCode(t, exitOK, "", append([]string{"jobs", "ls", "-o", "json"}, s.args...)...)), &ls); err != nil ||
				len(ls) != 2 || ls[1].Name != "solo" || fmt.Sprint(ls[1].Gone) != "[r2]" {
				t.Errorf("jobs ls: %+v %v; want solo listed, gone with r2", ls, err)
			}
			out := wantCode(t, exitOK, "", append([]string{"replicas", "ls"}, s.args...)...)
			if !strings.Contains(out, "left without shutting down") || !strings.Contains(out, "was running nightly") || !strings.Contains(out, "shut down at") {
				t.Errorf("replicas ls table does not say who died and what it was running:\n%s", out)
			}
		})
	}
}

// jobs check still checks a job whose every replica died while other
// replicas live on: its ticks are missed (exit 1), not silently dropped
// from the check with its replicas.
func TestCLICheckOrphanJob(t *testing.T) {
	t.Parallel()
	for _, s := range cliBackends(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := t.Context()
			reg := s.p.(lockprovider.Registry)
			if err := reg.Register(ctx, batontype.Instance{LockedBy: "r1", Started: time.Now(),
				Jobs: []batontype.JobSpec{{Name: "kept", Schedule: "@every 24h0m0s", Locked: true, AtMostFor: time.Hour}}}, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := reg.Register(ctx, batontype.Instance{LockedBy: "r2", Started: time.Now().Add(-time.Minute),
				Jobs: []batontype.JobSpec{{Name: "orphan", Schedule: "@every 1s", Locked: true, AtMostFor: time.Second}}}, time.Second); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1100 * time.Millisecond) // r2's 1 s TTL passes without a heartbeat: it died
			for _, args := range [][]string{{"jobs", "check", "--grace", "0"}, {"jobs", "check", "--grace", "0", "orphan"}} {
				out := wantCode(t, exitProblem, "", append(args, s.args...)...)
				if !strings.Contains(out, "orphan") || !strings.Contains(out, "missed") {
					t.Errorf("baton %s: the orphan job's missed tick is not reported:\n%s", strings.Join(args, " "), out)
				}
			}
		})
	}
}
