// Package runner runs the cronapp demo: several replicas of the app as
// separate processes against one Redis and one PostgreSQL, a live log of
// what each replica did at each tick, and at the end a summary and the
// checks: every tick of every locked job ran exactly once (the witness
// table's UNIQUE(job, tick) rows), the stale write was fenced out, the
// shared rate limit refused calls.
package runner

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/baton-go/baton/examples/cronapp/internal/wire"
)

// Config configures a demo run.
type Config struct {
	App         string        // path to the cronapp binary
	Replicas    int           // default 3
	Duration    time.Duration // from the moment every replica is ready; default 30s
	RedisURL    string        // required (see ResolveBackends)
	DatabaseURL string        // required
	// Locks is where the scheduled jobs' locks, ledger and registry are:
	// "redis" (the default) or "mysql", on MySQLURL (see ResolveMySQL).
	Locks    string
	MySQLURL string
	// PauseAfter: the first inventory run this long after start freezes
	// past its lease (see cronapp's -pause-after). Default 30% of
	// Duration; negative disables.
	PauseAfter time.Duration
	PauseFor   time.Duration // default 3.5s
	Keep       bool          // keep the run's schema and Redis keys
	Quiet      bool          // no live log, only the summary
	Out        io.Writer     // live log and summary; default os.Stdout
	// StatusAddr, when set, serves the status page (package status) on
	// this address while the replicas run; a busy address falls back to
	// a free port. The URL is printed at the start.
	StatusAddr string
}

func (c *Config) defaults() error {
	if c.App == "" || c.RedisURL == "" || c.DatabaseURL == "" {
		return errors.New("runner: App, RedisURL and DatabaseURL are required")
	}
	switch {
	case c.Locks == "":
		c.Locks = "redis"
	case c.Locks == "mysql" && c.MySQLURL == "":
		return errors.New("runner: Locks mysql needs MySQLURL")
	case c.Locks != "redis" && c.Locks != "mysql":
		return fmt.Errorf("runner: Locks %q: want redis or mysql", c.Locks)
	}
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	if c.Replicas < 2 {
		return errors.New("runner: at least 2 replicas, or there is nothing to coordinate")
	}
	if c.Duration == 0 {
		c.Duration = 30 * time.Second
	}
	if c.Duration < 6*time.Second {
		return errors.New("runner: duration below 6s leaves too few ticks")
	}
	if c.PauseAfter == 0 {
		c.PauseAfter = c.Duration * 3 / 10
	}
	if c.PauseFor == 0 {
		c.PauseFor = 3500 * time.Millisecond
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	return nil
}

// replica is one running copy of the app.
type replica struct {
	name  string
	cmd   *exec.Cmd
	ready bool
	exit  error // set when it exited
	done  bool
}

// line is one line of output of a replica.
type line struct {
	replica int
	rec     wire.Record
	ok      bool // rec parsed
	raw     string
	stderr  bool
}

// Run runs the demo and returns its summary; Summary.Pass says whether
// every check held. An error means the demo could not run at all.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	out := cfg.Out
	runID := "d" + randomHex(4)
	t0 := time.Now()

	fmt.Fprintf(out, "cronapp demo %s: %d replicas for %v\n", runID, cfg.Replicas, cfg.Duration)
	fmt.Fprintf(out, "  redis     %s  (keys cronapp:%s:*)\n", redact(cfg.RedisURL), runID)
	fmt.Fprintf(out, "  postgres  %s  (schema cronapp_%s)\n", redact(cfg.DatabaseURL), runID)
	if cfg.Locks == "mysql" {
		fmt.Fprintf(out, "  mysql     %s  (tables %s*: the scheduled jobs' locks, ledger and registry)\n", redactDSN(cfg.MySQLURL), mysqlTable(runID))
	}
	if cfg.StatusAddr != "" {
		page, err := serveStatus(ctx, cfg, runID)
		if err != nil {
			return nil, fmt.Errorf("status page: %w", err)
		}
		defer func() {
			if err := page.stop(); err != nil {
				fmt.Fprintf(out, "status page: %v\n", err)
			}
		}()
		fmt.Fprintf(out, "  status    %s#timeline?range=60000  (jobs, timeline, locks, rate limits: open it while the replicas run)\n", page.URL)
	}

	lines := make(chan line, 256)
	exits := make(chan int, cfg.Replicas)
	reps := make([]*replica, cfg.Replicas)
	var readers sync.WaitGroup
	for i := range reps {
		r, err := startReplica(cfg, runID, i, lines, exits, &readers)
		if err != nil {
			for _, r := range reps[:i] {
				_ = r.cmd.Process.Kill()
			}
			readers.Wait()
			return nil, err
		}
		reps[i] = r
	}

	col := newCollector(cfg.Replicas)
	var failures []string
	var resumeTimers []*time.Timer
	defer func() {
		for _, t := range resumeTimers {
			t.Stop()
		}
	}()
	handle := func(l line) {
		if l.ok {
			col.add(reps[l.replica].name, l.rec)
			if l.rec.Msg == wire.MsgReady {
				reps[l.replica].ready = true
			}
			if l.rec.Msg == wire.MsgEvent && l.rec.Outcome == wire.Paused && canFreeze && l.rec.PauseFor > 0 {
				p := reps[l.replica].cmd.Process
				resumeTimers = append(resumeTimers, time.AfterFunc(l.rec.PauseFor, func() { resume(p) }))
			}
		}
		if !cfg.Quiet {
			if s := render(t0, reps[l.replica].name, l); s != "" {
				fmt.Fprintln(out, s)
			}
		}
	}
	exited := func(i int) {
		r := reps[i]
		r.done = true
		if r.exit != nil {
			failures = append(failures, fmt.Sprintf("%s exited: %v", r.name, r.exit))
		}
	}
	allReady := func() bool {
		for _, r := range reps {
			if !r.ready {
				return false
			}
		}
		return true
	}
	running := func() int {
		n := 0
		for _, r := range reps {
			if !r.done {
				n++
			}
		}
		return n
	}

	// Phase 1: wait until every replica has started its scheduler.
	startDeadline := time.NewTimer(60 * time.Second)
	defer startDeadline.Stop()
	interrupted := false
	for !allReady() && len(failures) == 0 && !interrupted {
		select {
		case l := <-lines:
			handle(l)
		case i := <-exits:
			exited(i)
			if reps[i].exit == nil {
				failures = append(failures, reps[i].name+" exited before it was ready")
			}
		case <-startDeadline.C:
			failures = append(failures, "replicas not ready within 60s")
		case <-ctx.Done():
			interrupted = true
		}
	}
	if len(failures) == 0 && !interrupted {
		if !cfg.Quiet {
			fmt.Fprintf(out, "\n%s\n", jobsHeader(col.jobs))
			fmt.Fprintf(out, "%8s  %-10s %-14s %-10s  %-12s %s\n", "time", "replica", "job", "tick", "outcome", "detail")
		}
		// Phase 2: run.
		end := time.NewTimer(cfg.Duration)
		defer end.Stop()
	loop:
		for {
			select {
			case l := <-lines:
				handle(l)
			case i := <-exits:
				exited(i)
				if reps[i].exit == nil {
					failures = append(failures, reps[i].name+" stopped by itself during the run")
				}
				break loop
			case <-end.C:
				break loop
			case <-ctx.Done():
				interrupted = true
				break loop
			}
		}
	}
	if interrupted {
		failures = append(failures, "interrupted")
	}

	// Phase 3: graceful shutdown, as an orchestrator would do it.
	stopAt := time.Now()
	if !cfg.Quiet {
		fmt.Fprintf(out, "%8s  SIGTERM to every replica: no new ticks, running jobs finish, locks released\n", since(t0, stopAt))
	}
	for _, r := range reps {
		if !r.done {
			resume(r.cmd.Process) // in case it is frozen
			terminate(r.cmd.Process)
		}
	}
	kill := time.NewTimer(30 * time.Second)
	defer kill.Stop()
	for running() > 0 {
		select {
		case l := <-lines:
			handle(l)
		case i := <-exits:
			exited(i)
		case <-kill.C:
			failures = append(failures, "replicas still running 30s after SIGTERM: killed")
			for _, r := range reps {
				if !r.done {
					_ = r.cmd.Process.Kill()
				}
			}
		}
	}
	readers.Wait()
	for len(lines) > 0 {
		handle(<-lines)
	}

	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	sum, err := verify(vctx, cfg, runID, col, stopAt)
	if err != nil {
		return nil, err
	}
	sum.Failures = append(failures, sum.Failures...)
	sum.Pass = len(sum.Failures) == 0
	sum.Print(out)
	if !cfg.Keep {
		if err := cleanup(vctx, cfg, runID); err != nil {
			fmt.Fprintf(out, "cleanup: %v\n", err)
		}
		if cfg.Locks == "mysql" {
			if err := cleanupMySQL(vctx, cfg.MySQLURL, runID); err != nil {
				fmt.Fprintf(out, "cleanup: mysql: %v\n", err)
			}
		}
	} else {
		fmt.Fprintf(out, "kept: schema cronapp_%s, Redis keys cronapp:%s:*\n", runID, runID)
		if cfg.Locks == "mysql" {
			fmt.Fprintf(out, "kept: MySQL tables %s*\n", mysqlTable(runID))
		}
	}
	return sum, nil
}

func startReplica(cfg Config, runID string, i int, lines chan<- line, exits chan<- int, readers *sync.WaitGroup) (*replica, error) {
	name := "replica-" + strconv.Itoa(i+1)
	pauseAfter := cfg.PauseAfter
	if pauseAfter < 0 {
		pauseAfter = 0
	}
	// Not CommandContext: on interruption the replicas get SIGTERM like
	// at the end of a run, not SIGKILL.
	cmd := exec.Command(cfg.App,
		"-demo", "-log-format", "json", "-replica", name, "-run-id", runID,
		"-redis", cfg.RedisURL, "-database", cfg.DatabaseURL,
		"-pause-after", pauseAfter.String(), "-pause-for", cfg.PauseFor.String(),
		"-pause-stop="+strconv.FormatBool(canFreeze), "-locks", cfg.Locks, "-mysql", cfg.MySQLURL)
	cmd.Env = os.Environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.App, err)
	}
	r := &replica{name: name, cmd: cmd}
	var pipes sync.WaitGroup
	scan := func(rd io.Reader, isErr bool) {
		defer pipes.Done()
		sc := bufio.NewScanner(rd)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			rec, ok := wire.Parse(sc.Bytes())
			lines <- line{replica: i, rec: rec, ok: ok && !isErr, raw: sc.Text(), stderr: isErr}
		}
	}
	pipes.Add(2)
	readers.Add(1)
	go scan(stdout, false)
	go scan(stderr, true)
	go func() {
		defer readers.Done()
		pipes.Wait() // Wait only after the pipes are drained
		r.exit = cmd.Wait()
		exits <- i
	}()
	return r, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func since(t0, t time.Time) string {
	return fmt.Sprintf("+%.2fs", t.Sub(t0).Seconds())
}

// render formats one line of a replica's output for the live log.
func render(t0 time.Time, name string, l line) string {
	if !l.ok {
		if strings.TrimSpace(l.raw) == "" {
			return ""
		}
		return fmt.Sprintf("%8s  %-10s %s", "", name, l.raw)
	}
	r := l.rec
	at := since(t0, r.Time)
	switch r.Msg {
	case wire.MsgEvent:
		if r.Outcome == wire.Started {
			return "" // counted, not shown: "ran" follows
		}
		detail := r.Detail
		if r.Err != "" {
			detail = strings.TrimSpace(detail + " " + r.Err)
		}
		if r.Outcome == wire.Batch {
			detail = fmt.Sprintf("%d synced, %d held elsewhere, %d rate-limited: %s", r.Synced, r.Held+r.Deduped, r.Limited, r.Detail)
		}
		out := r.Outcome
		if r.Outcome == wire.Rejected || r.Outcome == wire.Duplicate || r.Outcome == wire.Paused {
			out = strings.ToUpper(out)
		}
		return fmt.Sprintf("%8s  %-10s %-14s %-10s  %-12s %s", at, name, r.Job, r.Tick.Local().Format("15:04:05.0"), out, detail)
	case wire.MsgReady:
		return fmt.Sprintf("%8s  %-10s ready (pid %d)", at, name, r.PID)
	case wire.MsgStopped:
		return fmt.Sprintf("%8s  %-10s stopped cleanly", at, name)
	case "job stats":
		return ""
	}
	s := fmt.Sprintf("%8s  %-10s %s: %s", at, name, r.Level, r.Msg)
	if r.Job != "" {
		s += " job=" + r.Job
	}
	if r.Err != "" {
		s += " err=" + r.Err
	}
	return s
}

func jobsHeader(jobs []wire.Job) string {
	var b strings.Builder
	b.WriteString("jobs (ticks aligned to the wall clock, the same instants on every replica):\n")
	for _, j := range jobs {
		at := ""
		if j.Offset > 0 {
			at = " +" + j.Offset.String()
		}
		fmt.Fprintf(&b, "  %-14s every %v%-7s %s\n", j.Name, j.Every, at, j.Describe)
	}
	return b.String()
}
