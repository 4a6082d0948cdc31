package lockprovidertest

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
)

// Option adjusts Run for a provider whose guarantees differ from the
// defaults in a documented way.
type Option func(*options)

type options struct {
	history history.Config
	work    Workload
	timing  timing // WithMinLease (suite.go)
}

// WithHistory sets the history checker's tolerances for the provider, e.g.
// Linger for a backend whose leases end later than their Until, or
// SplitVotes for a quorum of independent servers. A zero Delivery means
// a second here: the workload gives up on calls in flight (a waiting
// Acquire's deadline), and the backend may apply such a call after that.
func WithHistory(c history.Config) Option { return func(o *options) { o.history = c } }

// WithWorkload sets the History group's workload (clients, lease lengths,
// duration); its Names and Seed are set by Run.
func WithWorkload(w Workload) Option { return func(o *options) { o.work = w } }

func historyCases() []testCase {
	return []testCase{{"Workload", (*env).testWorkload}}
}

// seedFromEnv returns $SEED when set (to replay a run), else 0 (random).
func seedFromEnv(t testing.TB) int64 {
	s := os.Getenv("SEED")
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("SEED=%q: want a non-zero integer", s)
	}
	return n
}

// testWorkload runs the randomized workload on the provider and checks
// its whole history.
func (e *env) testWorkload() {
	w := e.s.opts.work
	w.Seed = seedFromEnv(e.t)
	w.Names = []string{e.name(), e.name()}
	h := history.New()
	seed, err := w.Run(e.ctx, h, e.p)
	if err != nil {
		e.t.Fatalf("workload (seed %d): %v", seed, err)
	}
	cfg := e.s.opts.history
	cfg.Seed = seed
	if cfg.Delivery == 0 {
		cfg.Delivery = time.Second
	}
	e.t.Logf("workload seed %d (replay with SEED=%d)", seed, seed)
	history.Verify(e.t, h, cfg)
}
