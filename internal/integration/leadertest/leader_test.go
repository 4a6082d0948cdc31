package leadertest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/leader"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/lockprovider/mysql"
	"github.com/baton-go/baton/lockprovider/postgres"
	"github.com/baton-go/baton/lockprovider/redis"
)

func redisProvider(t testing.TB) *redis.Provider {
	t.Helper()
	p, err := redis.New(redisenv.Client(t), &redis.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func postgresProvider(t testing.TB) *postgres.Provider {
	t.Helper()
	p, err := postgres.New(pgenv.Schema(t).Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

var providers = map[string]func(t testing.TB) lockprovider.Provider{
	"memory":   func(t testing.TB) lockprovider.Provider { return newMemory(t, nil) },
	"redis":    func(t testing.TB) lockprovider.Provider { return redisProvider(t) },
	"postgres": func(t testing.TB) lockprovider.Provider { return postgresProvider(t) },
	"mysql":    func(t testing.TB) lockprovider.Provider { return mysqlProvider(t) },
}

func mysqlProvider(t testing.TB) *mysql.Provider {
	t.Helper()
	p, err := mysql.New(mysqlenv.Database(t).DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

func newElection(t testing.TB, p lockprovider.Provider, by string, ttl time.Duration) *leader.Election {
	t.Helper()
	e, err := leader.New(p, "leader", &leader.Config{LockedBy: by, AtMostFor: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Campaign, observe, contend, resign and hand over, on every backend.
func TestElection(t *testing.T) {
	t.Parallel()
	for name, newProvider := range providers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testElection(t, newProvider(t))
		})
	}
}

func testElection(t *testing.T, p lockprovider.Provider) {
	ctx := context.Background()
	a := newElection(t, p, "candidate-a", 5*time.Second)
	b := newElection(t, p, "candidate-b", 5*time.Second)
	if _, err := a.Leader(ctx); !errors.Is(err, leader.ErrNoLeader) {
		t.Fatalf("Leader before any election: %v, want ErrNoLeader", err)
	}
	if err := a.IsLeader(ctx); !errors.Is(err, leader.ErrNotLeader) {
		t.Fatalf("IsLeader before campaigning: %v", err)
	}
	ta, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.IsLeader(ctx); err != nil {
		t.Fatalf("IsLeader of the leader: %v", err)
	}
	if err := b.IsLeader(ctx); !errors.Is(err, leader.ErrNotLeader) {
		t.Fatalf("IsLeader of a follower: %v", err)
	}
	// Campaigning inside the term is a nested hold of it: same token, and
	// its Resign keeps the leadership.
	nested, err := a.Campaign(ta.Context())
	if err != nil || nested.Token() != ta.Token() {
		t.Fatalf("Campaign with the term's Context: %v", err)
	}
	if err := nested.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.IsLeader(ctx); err != nil || ta.Check() != nil {
		t.Fatalf("after the nested term's Resign: IsLeader %v, Check %v", err, ta.Check())
	}
	info, err := b.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.LockedBy != "candidate-a" || info.Token != ta.Token() || !info.Until.After(info.GrantedAt) {
		t.Fatalf("Leader: %+v, want candidate-a with token %d", info, ta.Token())
	}
	if _, err := b.TryCampaign(ctx); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("TryCampaign while a leads: %v, want ErrNotAcquired", err)
	}

	// b waits; a's Resign wakes it.
	elected := make(chan *leader.Term, 1)
	errs := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		tb, err := b.Campaign(cctx)
		if err != nil {
			errs <- err
			return
		}
		elected <- tb
	}()
	select {
	case tb := <-elected:
		t.Fatalf("b elected with token %d while a leads", tb.Token())
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := ta.Check(); err != nil {
		t.Fatalf("a's term: %v", err)
	}
	if err := ta.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ta.Resign(ctx); err != nil {
		t.Fatalf("second Resign: %v", err)
	}
	if cause := context.Cause(ta.Context()); !errors.Is(cause, leader.ErrResigned) {
		t.Fatalf("a's Context after Resign: %v, want ErrResigned", cause)
	}
	if err := ta.Check(); !errors.Is(err, leader.ErrResigned) {
		t.Fatalf("a's Check after Resign: %v", err)
	}
	if err := a.IsLeader(ctx); !errors.Is(err, leader.ErrNotLeader) {
		t.Fatalf("IsLeader after Resign: %v", err)
	}
	var tb *leader.Term
	select {
	case tb = <-elected:
	case err := <-errs:
		t.Fatal(err)
	}
	defer tb.Resign(ctx)
	if err := b.IsLeader(ctx); err != nil {
		t.Fatalf("IsLeader of the new leader: %v", err)
	}
	if tb.Token() <= ta.Token() {
		t.Fatalf("b's token %d not above a's %d", tb.Token(), ta.Token())
	}
	info, err = a.Leader(ctx)
	if err != nil || info.LockedBy != "candidate-b" || info.Token != tb.Token() {
		t.Fatalf("Leader after the hand-over: %+v, %v", info, err)
	}

	// The term is a fencing token: a's late write is rejected once b wrote.
	var res fence.Resource
	if err := res.DoContext(tb.Context(), tb.Token(), nil); err != nil {
		t.Fatal(err)
	}
	if err := res.Do(ta.Token(), nil); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("deposed leader's write: %v, want ErrStaleToken", err)
	}
	// Refused before it is sent: the guard reads the released lease in the
	// Context (the cause leader.ErrResigned is the Context's, not the lease's).
	if err := res.DoContext(ta.Context(), ta.Token(), nil); !errors.Is(err, baton.ErrReleased) || errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("resigned leader's write with its term's Context: %v, want ErrReleased", err)
	}
}

// The leader renews its term: it outlives several lease lengths.
func TestTermRenewed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newMemory(t, nil)
	e := newElection(t, p, "a", 300*time.Millisecond)
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Resign(ctx)
	first := term.Lease().Until
	time.Sleep(time.Second)
	if err := term.Check(); err != nil {
		t.Fatalf("term after three lease lengths: %v", err)
	}
	if !term.Lease().Until.After(first) {
		t.Fatal("term not renewed")
	}
	other := newElection(t, p, "b", 300*time.Millisecond)
	if _, err := other.TryCampaign(ctx); !errors.Is(err, baton.ErrNotAcquired) {
		t.Fatalf("TryCampaign against a renewed term: %v", err)
	}
}

// Run: a term taken away (force-released by an operator) ends fn's context
// with ErrLockLost and Run campaigns again; cancelling Run's context ends
// the term and resigns.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newMemory(t, nil)
	e := newElection(t, p, "a", 600*time.Millisecond)
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu     sync.Mutex
		tokens []int64
		causes []error
	)
	terms := make(chan int64, 10)
	done := make(chan error, 1)
	go func() {
		done <- e.Run(rctx, func(ctx context.Context, term *leader.Term) error {
			terms <- term.Token()
			<-ctx.Done()
			mu.Lock()
			tokens = append(tokens, term.Token())
			causes = append(causes, context.Cause(ctx))
			mu.Unlock()
			return ctx.Err()
		})
	}()
	first := recvWithin(t, terms, 10*time.Second)
	if err := e.IsLeader(ctx); err != nil {
		t.Fatalf("IsLeader while Run leads: %v", err)
	}
	if _, err := p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: "leader", Token: first}); err != nil {
		t.Fatal(err)
	}
	second := recvWithin(t, terms, 10*time.Second)
	if second <= first {
		t.Fatalf("second term's token %d not above the first's %d", second, first)
	}
	stopped := errors.New("shutting down")
	cancel(stopped)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, stopped) {
			t.Fatalf("Run: %v, want context.Canceled with the cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(causes) != 2 || !errors.Is(causes[0], baton.ErrLockLost) || !errors.Is(causes[1], stopped) {
		t.Fatalf("fn's context causes %v, want [ErrLockLost, %v]", causes, stopped)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, leader.ErrNoLeader) {
		t.Fatalf("Leader after Run returned: %v, want ErrNoLeader (resigned)", err)
	}
	if err := e.IsLeader(ctx); !errors.Is(err, leader.ErrNotLeader) {
		t.Fatalf("IsLeader after Run returned: %v", err)
	}

	// fn returning while still leader: Run resigns and returns its error.
	boom := errors.New("boom")
	if err := e.Run(ctx, func(context.Context, *leader.Term) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Run: %v, want fn's error", err)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, leader.ErrNoLeader) {
		t.Fatalf("Leader after fn returned: %v", err)
	}
}

func recvWithin(t *testing.T, ch <-chan int64, d time.Duration) int64 {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("nothing within %v", d)
	}
	return 0
}

// withoutInspect hides the provider's optional capabilities.
type withoutInspect struct{ lockprovider.Provider }

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newMemory(t, nil)
	if _, err := leader.New(nil, "x", nil); !errors.Is(err, baton.ErrNilProvider) {
		t.Errorf("nil provider: %v", err)
	}
	var typedNil *memory.Provider
	if _, err := leader.New(typedNil, "x", nil); !errors.Is(err, baton.ErrNilProvider) {
		t.Errorf("typed nil provider: %v", err)
	}
	for name, c := range map[string]struct {
		name string
		cfg  *leader.Config
	}{
		"empty name":         {"", nil},
		"control character":  {"a\nb", nil},
		"negative AtMostFor": {"x", &leader.Config{AtMostFor: -time.Second}},
		"AtMostFor too long": {"x", &leader.Config{AtMostFor: batontype.MaxDuration + 1}},
		"LockedBy control":   {"x", &leader.Config{LockedBy: "a\x00"}},
	} {
		var ve *baton.ValidationError
		if _, err := leader.New(p, c.name, c.cfg); !errors.As(err, &ve) || !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("%s: %v, want a *ValidationError", name, err)
		}
	}
	e := newElection(t, withoutInspect{p}, "a", time.Second)
	var ve *baton.ValidationError
	if _, err := e.Leader(ctx); !errors.Is(err, leader.ErrObserveNotSupported) || !errors.As(err, &ve) || !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("Leader on a provider without Inspect: %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if _, err := e.Campaign(nil); !errors.Is(err, baton.ErrNilContext) {
		t.Errorf("Campaign(nil): %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := e.Run(nil, func(context.Context, *leader.Term) error { return nil }); !errors.Is(err, baton.ErrNilContext) {
		t.Errorf("Run(nil, fn): %v", err)
	}
	if err := e.Run(ctx, nil); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("Run(ctx, nil): %v", err)
	}
	// A campaign whose context ends while another leads reports it.
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Resign(ctx)
	other := newElection(t, p, "b", time.Second)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := other.Campaign(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Campaign past its deadline: %v", err)
	}
}

// A term taken away ends with ErrLockLost, and IsLeader says so before the
// term is resigned.
func TestTermLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newMemory(t, nil)
	e := newElection(t, p, "a", 300*time.Millisecond)
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: "leader", Token: term.Token()}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-term.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("term not ended after its lease was taken away")
	}
	if err := term.Err(); !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("Err: %v, want ErrLockLost", err)
	}
	if err := e.IsLeader(ctx); !errors.Is(err, leader.ErrNotLeader) || !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("IsLeader after the loss: %v", err)
	}
	if err := term.Resign(ctx); !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("Resign after the loss: %v, want ErrLockLost", err)
	}
}

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
