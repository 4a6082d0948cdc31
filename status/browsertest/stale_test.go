package browsertest

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/status"
)

// With a private Redis stalled (CLIENT PAUSE) beside a healthy
// PostgreSQL, the Locks view shows both locks: PostgreSQL's as read now,
// Redis's as last read, under a row that says Redis is stale and since
// when.
func TestBrowserStaleBackend(t *testing.T) {
	// Mostly waiting on leases, stalls and deadlines: run beside the others.
	t.Parallel()
	bctx := browser(t)
	ctx := context.Background()
	srvRedis := testenv.StartRedis(t)
	rp, err := redisprovider.New(redisenv.Server(t, srvRedis), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pgprovider.New(pgenv.Schema(t).Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []lockprovider.Provider{rp, pp} {
		if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: rp}, {Name: "postgres", Provider: pp}},
		Timeout: 2 * time.Second, Refresh: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	open(t, bctx, srv.URL+"/#locks", "locks")
	pauser := redisenv.Server(t, srvRedis)
	if err := pauser.Do(ctx, "CLIENT", "PAUSE", (15 * time.Second).Milliseconds(), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pauser.Do(context.Background(), "CLIENT", "UNPAUSE").Err() })
	// The page polls every second; its next reads find Redis stalled.
	do(t, bctx, chromedp.WaitVisible(`#locks-table tr[data-stale="redis"]`))
	row := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS(`#locks-table tr[data-stale="redis"]`))))
	if !strings.Contains(row, "stale") || !strings.Contains(row, "could not be read: showing what it held") || !strings.Contains(row, "ago") {
		t.Errorf("stale row: %q", row)
	}
	n := get(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#locks-table tbody tr:not(.unknown)").length`))
	if n != 2 {
		t.Errorf("%d lock rows with redis stale, want 2 (redis's as last read, postgres's)", n)
	}
}
