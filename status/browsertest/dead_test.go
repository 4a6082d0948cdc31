package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/status"
)

// The dead replica's job: every 2 s, its lease for 5 s, so the ticks
// after a run whose replica died are blocked by that run's lease.
const (
	deadEvery = 2 * time.Second
	deadLease = 5 * time.Second
	deadEnv   = "BATON_BROWSER_REPLICA"
)

type replicaSpec struct {
	Redis  string // the parent's server: without TEST_REDIS_URL each process would start its own
	Prefix string
	Hang   bool // the job never returns: the replica is killed mid-run
}

// TestBrowserReplicaWorker is the body of the replica processes of
// TestBrowserDeadReplica.
func TestBrowserReplicaWorker(t *testing.T) {
	var spec replicaSpec
	report := testenv.ChildSpec(t, deadEnv, &spec)
	opt, err := goredis.ParseURL(spec.Redis)
	if err != nil {
		t.Fatal(err)
	}
	opt.ContextTimeoutEnabled = true
	c := goredis.NewClient(opt)
	defer c.Close()
	p, err := redisprovider.New(c, &redisprovider.Config{Prefix: spec.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(p, &scheduler.Config{LockedBy: "r2", Ledger: true, RegistryTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Every(deadEvery).Locked("report", scheduler.AtMostFor(deadLease)).Do(func(ctx context.Context, run scheduler.Run) error {
		report("running %d", run.Token)
		if spec.Hang {
			select {} // until SIGKILL
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	<-t.Context().Done() // the parent stops it
}

// buildCLI builds the baton command from this repository into the test's
// temporary directory and returns its path.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "baton")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/baton")
	cmd.Dir = filepath.Join("..", "..") // the root module, which has the CLI's dependencies
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/baton: %v\n%s", err, out)
	}
	return bin
}

// batonJSON runs the baton command at bin with args, which must succeed,
// and decodes its output into v.
func batonJSON(t *testing.T, bin string, v any, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("baton %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("baton %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// A replica SIGKILLed mid-run, in a real browser, another replica running
// the same job: the job page shows the
// run unfinished once its lease has ended, the instances table shows the
// replica gone (and the CLI, asked then, says the same), the ticks its
// lease blocked name the dead run, and when
// the replica restarts under the same name its new runs are drawn after
// the dead one on its lane.
func TestBrowserDeadReplica(t *testing.T) {
	// Mostly waiting on leases, stalls and deadlines: run beside the others.
	t.Parallel()
	bctx := browser(t)
	cli := buildCLI(t)
	prefix := testenv.Prefix(t)
	rp, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	start := func(hang bool) (*testenv.Child, chan int64) {
		runs := make(chan int64, 16)
		k := testenv.StartChild(t, "TestBrowserReplicaWorker", deadEnv, replicaSpec{Redis: testenv.RedisURL(t), Prefix: prefix, Hang: hang}, func(line string) {
			var tok int64
			if _, err := fmt.Sscanf(line, "running %d", &tok); err == nil {
				runs <- tok
			}
		})
		return k, runs
	}
	k, runs := start(true)
	var dead int64
	select {
	case dead = <-runs:
	case <-time.After(60 * time.Second):
		t.Fatalf("the replica ran nothing in 60 s: %s", k.Stderr())
	}
	k.Signal(syscall.SIGKILL)
	<-k.Done()
	if last, _, err := rp.LastRuns(t.Context(), "report"); err != nil || last.Token != dead {
		t.Fatalf("the ledger's last run of report: %+v %v; want the dead run's token %d", last, err, dead)
	}
	// r1 runs the job too: it claims the ticks once the dead run's lease
	// has ended.
	r1, err := scheduler.New(rp, &scheduler.Config{LockedBy: "r1", Ledger: true, RegistryTTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Every(deadEvery).Locked("report", scheduler.AtMostFor(deadLease)).Do(func(ctx context.Context, run scheduler.Run) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r1.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r1.Shutdown(ctx)
	})

	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: rp}}, Grace: time.Second, Refresh: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	open(t, bctx, srv.URL+"/#job/report?backend=redis", "job")
	wait := func(what, js string) {
		t.Helper()
		// The lease ends deadLease after the grant; the page refreshes
		// every second. The bound is far past both, for a busy machine.
		if ok, err := chromedp.Run(bctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(60*time.Second))); err != nil || !ok {
			shown := get(t, bctx, chromedp.Evaluate[string](`document.querySelector("section.view:not([hidden])").innerText.slice(0, 3000)`))
			t.Fatalf("%s: not shown in 60 s (%v); the page shows:\n%s", what, err, shown)
		}
	}
	tok := strconv.FormatInt(dead, 10)
	wait("the dead run unfinished", `document.querySelector('#runs-table tr[data-token="`+tok+`"]')?.dataset.outcome === "unfinished"`)
	wait("the missed tick naming the dead run", `[...document.querySelectorAll('ul.problems li[data-kind="missed"]')].some((li) => li.textContent.includes("the run of r2") && li.textContent.includes("token `+tok+`"))`)
	open(t, bctx, srv.URL+"/#jobs", "jobs")
	wait("the replica gone", `document.querySelector('#instances-table tr[data-instance="r2"]')?.dataset.state === "gone"`)
	// The CLI says the same, read right after the page.
	cliArgs := []string{"--redis", testenv.RedisURL(t), "--redis-prefix", prefix, "-o", "json"}
	var runsOut []struct {
		Token      int64 `json:"token"`
		Unfinished bool  `json:"unfinished"`
	}
	batonJSON(t, cli, &runsOut, append([]string{"jobs", "runs", "report"}, cliArgs...)...)
	found := false
	for _, r := range runsOut {
		found = found || r.Token == dead && r.Unfinished
	}
	if !found {
		t.Errorf("baton jobs runs report: %+v; want the dead run (token %d) unfinished, as the page shows it", runsOut, dead)
	}
	var reps []struct {
		LockedBy string `json:"locked_by"`
		State    string `json:"state"`
		Running  []struct {
			Token int64 `json:"token"`
		} `json:"running"`
	}
	batonJSON(t, cli, &reps, append([]string{"replicas", "ls"}, cliArgs...)...)
	gone := false
	for _, r := range reps {
		gone = gone || r.LockedBy == "r2" && r.State == "gone" && len(r.Running) == 1 && r.Running[0].Token == dead
	}
	if !gone {
		t.Errorf("baton replicas ls: %+v; want r2 gone, the dead run (token %d) left open, as the page shows it", reps, dead)
	}

	// Restarted under the same name, it runs the job again: its new
	// runs start after the dead run's lease ended, on its lane.
	k, runs = start(false)
	t.Cleanup(func() { k.Signal(syscall.SIGTERM); <-k.Done() })
	var next int64
	select {
	case next = <-runs:
	case <-time.After(60 * time.Second):
		t.Fatalf("the restarted replica ran nothing in 60 s: %s", k.Stderr())
	}
	open(t, bctx, srv.URL+"/#timeline", "timeline")
	wait("the new run drawn", `!!document.querySelector('rect[data-kind="run"][data-token="`+strconv.FormatInt(next, 10)+`"]')`)
	bars := get(t, bctx, chromedp.Evaluate[struct {
		DeadEnd, NextStart          float64
		DeadLane, NextLane, Outcome string
	}](`(() => { const d = document.querySelector('rect[data-token="`+tok+`"]'), n = document.querySelector('rect[data-token="`+strconv.FormatInt(next, 10)+`"]');
		return {DeadEnd: Number(d.dataset.leaseEnd), NextStart: Number(n.dataset.start), DeadLane: d.dataset.replica, NextLane: n.dataset.replica, Outcome: d.dataset.outcome}; })()`))
	if bars.Outcome != "unfinished" || bars.DeadLane != "r2" || bars.NextLane != "r2" || bars.DeadEnd == 0 || bars.NextStart < bars.DeadEnd {
		t.Errorf("timeline: dead run %s on %s ending %v, next run on %s starting %v; want the next one after the dead one's lease, both on r2",
			bars.Outcome, bars.DeadLane, bars.DeadEnd, bars.NextLane, bars.NextStart)
	}
	if info, err := rp.Inspect(t.Context(), "report"); err == nil && info.Token == dead {
		t.Errorf("the dead run's lease is still held: %+v", info)
	}
}
