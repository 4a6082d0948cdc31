package leadertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/fence/redisfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/leader"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
)

// Candidates in processes of their own: the test binary re-executed with
// -test.run ^TestCandidateProcess$ and a candidateSpec in candidateEnv. A
// candidate runs Election.Run; while it leads it writes every 20 ms, with
// its term's Context and token, to a PostgreSQL row through pgfence (a
// trigger appends every applied write to a witness table) and to a Redis
// hash through redisfence. When its term ends with ErrLockLost it makes one
// more write of each kind with the old token and a context that carries no
// lock, as a deposed leader whose write was already on its way would: the
// guards must refuse them. It reports lines starting with "@@ " on stdout
// and stops when its stdin closes.
const candidateEnv = "BATON_LEADER_CANDIDATE"

type candidateSpec struct {
	ID        string
	Backend   string // "redis" or "postgres": the provider that elects
	RedisURL  string // the parent's Redis, for the Redis provider and redisfence
	Prefix    string // Redis key prefix
	PGURL     string // the test schema: PostgreSQL leases, the guarded row and the witness
	AtMostFor time.Duration
}

const leadership = "leader"

// TestCandidateProcess is the body of a candidate process; run directly it
// has nothing to do.
func TestCandidateProcess(t *testing.T) {
	var spec candidateSpec
	report := testenv.ChildSpec(t, candidateEnv, &spec)
	r := openResources(t, spec)
	e, err := leader.New(r.provider, leadership, &leader.Config{AtMostFor: spec.AtMostFor, LockedBy: spec.ID})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // the parent closes stdin to stop the candidate
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	report("ready")
	err = e.Run(ctx, func(ctx context.Context, term *leader.Term) error {
		token := term.Token()
		report("elected %d", token)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			if err := r.write(ctx, spec.ID, token); err != nil && ctx.Err() == nil {
				report("write-error %d %v", token, err)
			} else if err == nil && n == 0 {
				report("wrote %d", token)
			}
			select {
			case <-tick.C:
				continue
			case <-ctx.Done():
			}
			if !errors.Is(context.Cause(ctx), baton.ErrLockLost) {
				return nil
			}
			report("lost %d", token)
			// The late write of a deposed leader: no lock in the context,
			// so only the tokens stand in its way.
			bg := context.Background()
			report("late-pg %d %s", token, outcome(r.write(bg, spec.ID+"-late", token)))
			report("late-redis %d %s", token, outcome(r.redisGuard.Set(bg, r.prefix+"resource", token, spec.ID+"-late")))
			return ctx.Err()
		}
	})
	if ctx.Err() == nil {
		t.Errorf("Run returned before the parent stopped it: %v", err)
	}
	report("stopped")
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "applied"
	case errors.Is(err, fence.ErrStaleToken):
		return "rejected"
	default:
		return "error:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
}

type resources struct {
	provider   lockprovider.Provider
	pool       *pgxpool.Pool
	redisGuard *redisfence.Guard
	pgGuard    *pgfence.Guard
	prefix     string
}

func openResources(t *testing.T, spec candidateSpec) *resources {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), spec.PGURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opt, err := goredis.ParseURL(spec.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	opt.ContextTimeoutEnabled = true
	client := goredis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	r := &resources{pool: pool, prefix: spec.Prefix}
	switch spec.Backend {
	case "redis":
		r.provider, err = redis.New(client, &redis.Config{Prefix: spec.Prefix})
	case "postgres":
		r.provider, err = postgres.New(pool, nil)
	default:
		err = fmt.Errorf("backend %q", spec.Backend)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.redisGuard, err = redisfence.NewGuard(client); err != nil {
		t.Fatal(err)
	}
	if r.pgGuard, err = pgfence.NewGuard("resource", "id", nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// write is one fenced write of the leader: the row (its trigger appends the
// witness in the same statement), then the Redis hash. One statement in
// autocommit, not a transaction: a leader stopped inside a transaction
// would keep the row locked and block its successor's writes until it
// resumed.
func (r *resources) write(ctx context.Context, writer string, token int64) error {
	if err := r.pgGuard.Update(ctx, r.pool, token, 1, map[string]any{"body": writer}); err != nil {
		return err
	}
	return r.redisGuard.Set(ctx, r.prefix+"resource", token, writer)
}

// candidate is a running candidate process, seen from the parent.
type candidate struct {
	id string
	*testenv.Child
}

// event is one report of a candidate.
type event struct {
	at    time.Time
	id    string
	kind  string
	token int64
	rest  string
}

// eventLog collects the reports of every candidate in arrival order.
type eventLog struct {
	mu     sync.Mutex
	events []event
	change chan struct{} // closed and replaced on every append
}

func newEventLog() *eventLog { return &eventLog{change: make(chan struct{})} }

func (l *eventLog) add(e event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	close(l.change)
	l.change = make(chan struct{})
}

// wait returns the first event from index from on that matches, waiting up
// to d for it.
func (l *eventLog) wait(t *testing.T, what string, d time.Duration, match func(event) bool) event {
	t.Helper()
	deadline := time.After(d)
	for {
		l.mu.Lock()
		for _, e := range l.events {
			if match(e) {
				l.mu.Unlock()
				return e
			}
		}
		ch := l.change
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s within %v; reports:\n%s", what, d, l)
		}
	}
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.events {
		fmt.Fprintf(&b, "  %s %s %s %d %s\n", e.at.Format("15:04:05.000"), e.id, e.kind, e.token, e.rest)
	}
	return b.String()
}

func startCandidate(t *testing.T, spec candidateSpec, log *eventLog) *candidate {
	t.Helper()
	child := testenv.StartChild(t, "TestCandidateProcess", candidateEnv, spec, func(line string) {
		f := strings.SplitN(line, " ", 3)
		e := event{at: time.Now(), id: spec.ID, kind: f[0]}
		if len(f) > 1 {
			e.token, _ = strconv.ParseInt(f[1], 10, 64)
		}
		if len(f) > 2 {
			e.rest = f[2]
		}
		log.add(e)
	})
	return &candidate{id: spec.ID, Child: child}
}

// TestElectionProcesses: three candidates in processes of their own,
// on Redis and on PostgreSQL. The leader is stopped (SIGSTOP) past its
// lease: another candidate is elected with a larger token and writes; the
// stopped one, resumed, learns of the loss and its late writes with the old
// token are rejected by both guards. Then the leader is killed (SIGKILL): a
// new one is elected within the lease length plus a margin. Throughout, the
// witness table must show one writer per token and tokens that never go
// back: never two leaders writing.
func TestElectionProcesses(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testElectionProcesses(t, backend)
		})
	}
}

func testElectionProcesses(t *testing.T, backend string) {
	const ttl = time.Second
	ctx := context.Background()
	pg := pgenv.Schema(t)
	spec := candidateSpec{Backend: backend, RedisURL: testenv.RedisURL(t), Prefix: testenv.Prefix(t), PGURL: pg.URL, AtMostFor: ttl}
	for _, stmt := range []string{
		`CREATE TABLE resource (id int PRIMARY KEY, body text NOT NULL)`,
		`INSERT INTO resource VALUES (1, 'initial')`,
		`CREATE TABLE witness (seq bigserial PRIMARY KEY, token bigint NOT NULL, writer text NOT NULL)`,
		`CREATE FUNCTION witness_write() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN INSERT INTO witness (token, writer) VALUES (NEW.last_fence, NEW.body); RETURN NEW; END $$`,
	} {
		if _, err := pg.Pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := pgfence.AddColumn(ctx, pg.Pool, "resource"); err != nil {
		t.Fatal(err)
	}
	// Every applied write is witnessed, in the order the row lock let them in.
	if _, err := pg.Pool.Exec(ctx, `CREATE TRIGGER witness AFTER UPDATE ON resource FOR EACH ROW EXECUTE FUNCTION witness_write()`); err != nil {
		t.Fatal(err)
	}
	r := openResources(t, spec)
	if p, ok := r.provider.(*postgres.Provider); ok {
		if err := p.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	observer, err := leader.New(r.provider, leadership, nil)
	if err != nil {
		t.Fatal(err)
	}

	log := newEventLog()
	candidates := map[string]*candidate{}
	for _, id := range []string{"c1", "c2", "c3"} {
		s := spec
		s.ID = id
		candidates[id] = startCandidate(t, s, log)
	}
	for id := range candidates {
		log.wait(t, id+" ready", time.Minute, func(e event) bool { return e.id == id && e.kind == "ready" })
	}
	kind := func(k string) func(event) bool { return func(e event) bool { return e.kind == k } }
	first := log.wait(t, "a first leader's write", 30*time.Second, kind("wrote"))
	info, err := observer.Leader(ctx)
	if err != nil || info.LockedBy != first.id || info.Token != first.token {
		t.Fatalf("Leader: %+v, %v; want %s with token %d", info, err, first.id, first.token)
	}

	// Pause the leader past its lease, after it wrote for a while.
	time.Sleep(300 * time.Millisecond)
	a := candidates[first.id]
	if err := a.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	second := log.wait(t, "a write of a second leader", 10*ttl+10*time.Second, func(e event) bool {
		return e.kind == "wrote" && e.token > first.token
	})
	if second.id == first.id {
		t.Fatalf("the stopped candidate %s wrote as leader again: %v", first.id, log)
	}
	t.Logf("%s stopped; %s elected and wrote %v later (lease %v)", first.id, second.id, second.at.Sub(stopped).Round(time.Millisecond), ttl)
	if info, err := observer.Leader(ctx); err != nil || info.LockedBy != second.id || info.Token != second.token {
		t.Errorf("Leader while %s is stopped: %+v, %v; want %s with token %d", first.id, info, err, second.id, second.token)
	}
	time.Sleep(300 * time.Millisecond) // the new leader writes on
	if err := a.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	fromA := func(k string) func(event) bool {
		return func(e event) bool { return e.id == first.id && e.kind == k && e.token == first.token }
	}
	log.wait(t, first.id+"'s loss", 30*time.Second, fromA("lost"))
	for _, k := range []string{"late-pg", "late-redis"} {
		if e := log.wait(t, first.id+"'s "+k, 30*time.Second, fromA(k)); e.rest != "rejected" {
			t.Errorf("deposed leader %s's late write (%s) with token %d after %s's with %d: %s, want rejected",
				first.id, k, first.token, second.id, second.token, e.rest)
		}
	}

	// Kill the leader: another is elected once the lease lapses.
	b := candidates[second.id]
	if err := b.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	third := log.wait(t, "a leader after the kill", 10*ttl+10*time.Second, func(e event) bool {
		return e.kind == "elected" && e.token > second.token
	})
	took := third.at.Sub(killed)
	t.Logf("%s killed; %s elected %v later (lease %v)", second.id, third.id, took.Round(time.Millisecond), ttl)
	// The lease lapses at most ttl after the last renewal, and candidates
	// poll at least every baton.DefaultMaxBackoff; the rest is slack for a
	// loaded machine.
	if limit := ttl + baton.DefaultMaxBackoff + 3*time.Second; took > limit {
		t.Errorf("new leader %v after the kill, want within %v", took, limit)
	}
	log.wait(t, third.id+"'s write", 30*time.Second, func(e event) bool { return e.kind == "wrote" && e.token == third.token })
	time.Sleep(300 * time.Millisecond)

	// Stop every candidate, then read the witness.
	for _, c := range candidates {
		c.CloseStdin()
	}
	for id := range candidates {
		if id == second.id {
			continue
		}
		log.wait(t, id+" stopped", 30*time.Second, func(e event) bool { return e.id == id && e.kind == "stopped" })
	}
	if e := log.wait(t, "", 0, func(event) bool { return true }); e.kind == "failed" {
		t.Fatalf("a candidate failed:\n%s", log)
	}
	for _, e := range log.events {
		if e.kind == "failed" || (strings.HasPrefix(e.kind, "late-") && e.rest != "rejected") {
			t.Errorf("report %s %s %d %s", e.id, e.kind, e.token, e.rest)
		}
	}
	checkWitness(t, pg.Pool, first.token, second.token, third.token)
	value, token, err := r.redisGuard.Get(ctx, r.prefix+"resource")
	if err != nil || token < third.token || strings.HasSuffix(value, "-late") {
		t.Errorf("Redis resource: %q token %d (%v); want a leader's write with token >= %d", value, token, err, third.token)
	}
}

// checkWitness reads the writes in the order PostgreSQL applied them (the
// guarded row serialises them): tokens never go back, each token has one
// writer, no late write landed, and the three leaders seen all wrote.
func checkWitness(t *testing.T, pool *pgxpool.Pool, tokens ...int64) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT token, writer FROM witness ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	type write struct {
		token  int64
		writer string
	}
	ws, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (write, error) {
		var w write
		err := row.Scan(&w.token, &w.writer)
		return w, err
	})
	if err != nil {
		t.Fatal(err)
	}
	writers := map[int64]string{}
	var last int64
	for i, w := range ws {
		if w.token < last {
			t.Errorf("write #%d by %s with token %d after a write with token %d: two leaders wrote", i, w.writer, w.token, last)
		}
		if prev, ok := writers[w.token]; ok && prev != w.writer {
			t.Errorf("token %d written by %s and %s", w.token, prev, w.writer)
		}
		if strings.HasSuffix(w.writer, "-late") {
			t.Errorf("a deposed leader's late write landed: %+v", w)
		}
		writers[w.token] = w.writer
		last = w.token
	}
	for _, tok := range tokens {
		if _, ok := writers[tok]; !ok {
			t.Errorf("no write with token %d in the witness (%d writes)", tok, len(ws))
		}
	}
	t.Logf("witness: %d writes under %d terms, tokens never went back", len(ws), len(writers))
}
