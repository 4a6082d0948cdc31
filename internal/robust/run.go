package robust

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/faultproxy"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
)

// Server is a backend server the run may kill and restart.
type Server interface {
	Kill()
	Restart() error
}

// Target is one backend under test.
type Target struct {
	Name     string
	Proxies  []*faultproxy.Proxy // every path from the clients to the backend
	Servers  []Server            // servers that survive a kill and restart with their data
	Provider lockprovider.Provider
	Config   history.Config // the backend's tolerances; the run sets Seed and Delivery
	// Workers is how many worker processes run the workload beside this
	// one, each through the same proxies: the test package's
	// TestRobustWorker (see Worker) builds their provider from Spec.
	Workers int
	Spec    Spec
	// ResetOnce makes a Reset fault reset the open connections once
	// rather than every new one for its duration: for a client that
	// cannot tell a handshake reset from a lost statement (the MySQL
	// driver), whose retries would otherwise fill the history with
	// more operations of unknown outcome than the checker can search.
	ResetOnce bool
}

// Spec is what a worker process is told.
type Spec struct {
	Backend string   // Target.Name
	Addrs   []string // where to connect: the proxies' addresses, say
	Extra   string   // anything else the backend needs (a key prefix, a schema)

	Seed        int64
	Names       []string
	FirstClient int
	Duration    time.Duration
	Out         string // where the worker saves its history
}

const workerEnv = "BATON_ROBUST_WORKER"

// Run runs the workload on tg under its seeded fault schedule, merges
// the workers' histories into its own, and checks the whole history.
func Run(t *testing.T, tg Target) {
	t.Helper()
	seed, d := Seed(t), Duration(t)
	plan := Plan(seed, tg.Name, d, len(tg.Proxies), len(tg.Servers), tg.Workers)
	names := []string{fmt.Sprintf("robust-%s-%s-a", tg.Name, testenv.Unique()), fmt.Sprintf("robust-%s-%s-b", tg.Name, testenv.Unique())}
	t.Logf("robust %s: seed %d (replay with SEED=%d), %v, %d worker processes, %d faults planned", tg.Name, seed, seed, d, tg.Workers, len(plan))

	h := history.New()
	var kids []*testenv.Child
	var outs []string
	dir := t.TempDir()
	for i := range tg.Workers {
		s := tg.Spec
		s.Backend, s.Seed, s.Names, s.FirstClient, s.Duration = tg.Name, seed+int64(i)+1, names, 100*(i+1), d
		s.Out = filepath.Join(dir, fmt.Sprintf("worker-%d.json", i))
		outs = append(outs, s.Out)
		kids = append(kids, testenv.StartChild(t, "TestRobustWorker", workerEnv, s, func(line string) {
			if line != "done" {
				t.Errorf("worker %d: %s", i, line)
			}
		}))
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	var injected []Fault
	wg.Go(func() { injected = inject(ctx, t, h, tg, kids, plan) })
	w := lockprovidertest.Workload{Seed: seed, Names: names, Duration: d}
	if _, err := w.Run(ctx, h, tg.Provider); err != nil {
		t.Fatalf("workload: %v", err)
	}
	wg.Wait()
	for _, p := range tg.Proxies {
		p.SetMode(faultproxy.Pass)
		p.SetDelay(0)
	}

	all := []*history.History{h}
	for i, k := range kids {
		select {
		case <-k.Done():
		case <-time.After(d + 30*time.Second):
			// Its goroutines say where it is stuck.
			k.Signal(syscall.SIGCONT)
			k.Signal(syscall.SIGQUIT)
			select {
			case <-k.Done():
			case <-time.After(10 * time.Second):
			}
			t.Fatalf("worker %d did not finish; its stderr:\n%s", i, k.Stderr())
		}
		raw, err := os.ReadFile(outs[i])
		if err != nil {
			t.Fatalf("worker %d left no history: %v\n%s", i, err, k.Stderr())
		}
		wh, err := loadWorker(raw, i)
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		all = append(all, wh)
	}
	if len(all) > 1 {
		h = history.Merge(all...)
	}

	cfg := tg.Config
	cfg.Seed = seed
	// A request held by a fault reaches the backend when the fault ends;
	// a delayed chunk and a retry on a fresh connection add a little.
	cfg.Delivery = MaxFault + time.Second
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second // per search; a search that times out fails the run
	}
	t.Logf("robust %s: seed %d: %d faults injected (%s): %s", tg.Name, seed, len(injected), summary(injected), faultList(injected))
	r := history.Verify(t, h, cfg) // a failure saves the history and its picture
	verdict := "no violation"
	if !r.OK() {
		verdict = fmt.Sprintf("%d violations", len(r.Violations))
		if r.Inconclusive {
			verdict = "inconclusive"
		}
	}
	t.Logf("robust %s: seed %d: %d operations checked (%d of unknown outcome), %d windows, %d fenced writes, %d processes: %s",
		tg.Name, seed, r.Ops, r.Unknown, r.Windows, r.Writes, len(all), verdict)
}

// loadWorker loads worker i's saved history with its fenced resources
// renamed apart: each process fences its writes with a resource of its
// own, and writes to different resources are not ordered by tokens.
func loadWorker(raw []byte, i int) (*history.History, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var writes []map[string]any
	if w, ok := m["writes"]; ok {
		if err := json.Unmarshal(w, &writes); err != nil {
			return nil, err
		}
	}
	for _, w := range writes {
		w["res"] = fmt.Sprintf("%v@worker-%d", w["res"], i)
	}
	w, err := json.Marshal(writes)
	if err != nil {
		return nil, err
	}
	m["writes"] = w
	if raw, err = json.Marshal(m); err != nil {
		return nil, err
	}
	return history.Load(bytes.NewReader(raw))
}

func faultList(fs []Fault) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.String()
	}
	return strings.Join(s, "; ")
}

// inject applies plan, in order, until ctx ends, and returns the faults
// it applied. Each is healed before the next begins.
func inject(ctx context.Context, t *testing.T, h *history.History, tg Target, kids []*testenv.Child, plan []Fault) []Fault {
	start := time.Now()
	var done []Fault
	wait := func(until time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(start.Add(until))):
			return true
		}
	}
	for _, f := range plan {
		if !wait(f.At) {
			break
		}
		h.Note("fault: %s", f)
		done = append(done, f)
		var heal func()
		switch f.Kind {
		case Delay:
			p := tg.Proxies[f.Target]
			p.SetDelay(f.Delay)
			heal = func() { p.SetDelay(0) }
		case Reset:
			p := tg.Proxies[f.Target]
			if tg.ResetOnce {
				p.ResetAll()
				heal = func() {}
				break
			}
			p.SetMode(faultproxy.Reset)
			heal = func() { p.SetMode(faultproxy.Pass) }
		case Blackhole, DropReplies:
			p := tg.Proxies[f.Target]
			p.SetMode(map[Kind]faultproxy.Mode{Blackhole: faultproxy.Blackhole, DropReplies: faultproxy.DropReplies}[f.Kind])
			heal = func() { p.SetMode(faultproxy.Pass) }
		case Restart:
			s := tg.Servers[f.Target]
			s.Kill()
			heal = func() {
				if err := s.Restart(); err != nil {
					t.Errorf("restart of server %d: %v", f.Target, err)
				}
			}
		case Stop:
			k := kids[f.Target]
			k.Signal(syscall.SIGSTOP)
			heal = func() { k.Signal(syscall.SIGCONT) }
		}
		wait(f.At + f.For) // heal even when the run ends meanwhile
		heal()
	}
	return done
}

// Worker is the body of a test package's TestRobustWorker: in a worker
// process it builds the provider from the Spec the parent sent, runs the
// workload on it, and saves the history for the parent; run directly, it
// skips.
func Worker(t *testing.T, build func(t *testing.T, s Spec) lockprovider.Provider) {
	var s Spec
	report := testenv.ChildSpec(t, workerEnv, &s)
	p := build(t, s)
	h := history.New()
	w := lockprovidertest.Workload{Seed: s.Seed, Names: s.Names, Clients: 3, FirstClient: s.FirstClient, Duration: s.Duration}
	if _, err := w.Run(t.Context(), h, p); err != nil {
		t.Fatalf("workload: %v", err)
	}
	f, err := os.Create(s.Out)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Save(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	report("done")
}
