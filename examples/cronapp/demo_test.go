package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/examples/cronapp/internal/runner"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestDemo runs a shortened `make demo`: the cronapp and demo binaries,
// built into a temporary directory, three replicas as real processes on
// the test Redis and PostgreSQL for 10 seconds. It checks what make demo
// promises: exit status 0, the summary printed, every tick of every locked
// job run exactly once, a frozen replica's stale write refused by the
// fence, calls refused by the shared rate limit.
func TestDemo(t *testing.T) { runDemo(t) }

// TestDemoMySQLLocks is TestDemo with the scheduled jobs' locks, ledger
// and registry on MySQL (make demo DEMOFLAGS='-locks mysql'), in a
// database of its own on the test server, which the demo leaves empty.
func TestDemoMySQLLocks(t *testing.T) {
	my := mysqlenv.Database(t)
	text := runDemo(t, "-locks", "mysql", "-mysql", my.DSN)
	if !strings.Contains(text, "  mysql     ") {
		t.Errorf("the demo's header does not name the MySQL server:\n%s", text)
	}
	var n int
	if err := my.DB.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n); err != nil || n != 0 {
		t.Errorf("MySQL tables left after the demo: %d (%v)", n, err)
	}
	if err := my.DB.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()").Scan(&n); err != nil || n != 0 {
		t.Errorf("MySQL procedures left after the demo: %d (%v)", n, err)
	}
}

// runDemo runs the demo with the extra flags, checks it, and returns its
// output.
func runDemo(t *testing.T, flags ...string) string {
	redisURL, databaseURL := testenv.RedisURL(t), testenv.PostgresURL(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the demo: %v", err)
	}
	dir := t.TempDir()
	build := exec.Command(goBin, "build", "-o", dir+string(filepath.Separator), ".", "./cmd/demo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sumPath := filepath.Join(dir, "summary.json")
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "demo"), append([]string{
		"-app", filepath.Join(dir, "cronapp"), "-redis", redisURL, "-database", databaseURL,
		"-duration", "10s", "-pause-after", "3s", "-summary-json", sumPath, "-status-addr", "127.0.0.1:0"}, flags...)...)
	var out, errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read the output as it comes: the status page's URL is printed at
	// the start, and the page must show the replicas while they run.
	pageURL := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			out.WriteString(line + "\n")
			if u, ok := strings.CutPrefix(strings.TrimSpace(line), "status    "); ok {
				u, _, _ = strings.Cut(strings.Fields(u)[0], "#")
				pageURL <- u
			}
		}
	}()
	select {
	case u := <-pageURL:
		checkStatusPage(t, u)
	case <-read:
		t.Error("the demo printed no status page URL")
	}
	<-read
	err = cmd.Wait()
	t.Logf("demo output:\n%s%s", out.String(), errOut.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("demo exited with status %d, want 0", exit.ExitCode())
	}
	if err != nil {
		t.Fatalf("demo: %v", err)
	}

	text := out.String()
	for _, want := range []string{"summary of run", "fenced rejections", "REJECTED", "PASS: every tick of every locked job ran exactly once"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	b, err := os.ReadFile(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum runner.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Pass || len(sum.Failures) > 0 {
		t.Errorf("summary: pass %v, failures %q", sum.Pass, sum.Failures)
	}
	if len(sum.Checks) != 2 {
		t.Fatalf("exactly-once checks for %d locked jobs, want 2 (daily-report, inventory)", len(sum.Checks))
	}
	for _, c := range sum.Checks {
		// 10 s of 2 s ticks, less the partial ends: at least 4 each.
		if c.Expected < 4 || c.Once != c.Expected || c.Duplicates != 0 || len(c.Missing) != 0 {
			t.Errorf("%s: %d ticks expected, %d ran exactly once, %d duplicates, missing %v", c.Job, c.Expected, c.Once, c.Duplicates, c.Missing)
		}
	}
	if sum.Rejected < 1 {
		t.Errorf("fenced rejections: %d, want at least 1", sum.Rejected)
	}
	if sum.RateLimit < 1 {
		t.Errorf("rate-limited calls: %d, want at least 1", sum.RateLimit)
	}
	if sum.Applied < 4 || sum.StockEnd != sum.StockStart-int64(sum.Applied) {
		t.Errorf("inventory: %d sales applied, stock %d -> %d", sum.Applied, sum.StockStart, sum.StockEnd)
	}
	replicas := map[string]bool{}
	for _, r := range sum.Rows {
		replicas[r.Replica] = true
	}
	if len(replicas) != 4 { // three replicas and "all"
		t.Errorf("summary rows name replicas %v, want replica-1..3 and all", replicas)
	}
	return text
}

// checkStatusPage polls the demo's status page until its Jobs view lists
// the three replicas and its timeline has runs of the locked jobs, each in
// the lane of a replica.
func checkStatusPage(t *testing.T, base string) {
	t.Helper()
	var jobs struct {
		Instances []struct {
			LockedBy string `json:"locked_by"`
		} `json:"instances"`
	}
	var tl struct {
		Jobs []struct {
			Job   string   `json:"job"`
			Lanes []string `json:"lanes"`
			Runs  []struct {
				Lane    int    `json:"lane"`
				Outcome string `json:"outcome"`
			} `json:"runs"`
		} `json:"jobs"`
	}
	get := func(path string, v any) error {
		resp, err := http.Get(base + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(v)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := get("api/jobs", &jobs)
		if err == nil {
			err = get("api/timeline", &tl)
		}
		runs := 0
		for _, j := range tl.Jobs {
			for _, r := range j.Runs {
				if strings.HasPrefix(j.Lanes[r.Lane], "replica-") {
					runs++
				}
			}
		}
		if err == nil && len(jobs.Instances) == 3 && runs >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("status page %s: %v, %d instances, %d runs on the timeline after 60s", base, err, len(jobs.Instances), runs)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
