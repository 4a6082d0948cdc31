package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// baton serve shows the backends' state on the status page, refuses
// actions unless --actions, and exits 0 on SIGINT.
func TestServe(t *testing.T) {
	t.Parallel()
	url, prefix := testenv.RedisURL(t), testenv.Prefix(t)
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, LockedBy: "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, actions := range []bool{false, true} {
		t.Run(fmt.Sprintf("actions=%v", actions), func(t *testing.T) {
			args := []string{"--redis", url, "--redis-prefix", prefix, "--addr", "127.0.0.1:0"}
			if actions {
				args = append(args, "--actions")
			}
			lines, err := startServe(t, []string{"BATON_REDIS_URL=", "BATON_POSTGRES_URL="}, 2, args...)
			if len(lines) == 0 {
				t.Fatalf("baton serve printed no address: %v", err)
			}
			base := strings.Fields(strings.TrimPrefix(lines[0], "baton: status page on "))[0]
			// At start it says what it reached.
			if len(lines) < 2 || !strings.HasPrefix(lines[1], "baton: redis (prefix \""+prefix+"\"") || !strings.Contains(lines[1], "): reached: ") {
				t.Errorf("baton serve's backend line: %q, %v", lines, err)
			}

			resp, err := http.Get(base + "api/locks")
			if err != nil {
				t.Fatal(err)
			}
			var locks struct {
				Locks []struct {
					Name, Backend string
					Token         int64
				}
			}
			err = json.NewDecoder(resp.Body).Decode(&locks)
			resp.Body.Close()
			if err != nil || len(locks.Locks) != 1 || locks.Locks[0].Name != "nightly" || locks.Locks[0].Backend != "redis" || locks.Locks[0].Token != lease.Token {
				t.Errorf("api/locks: %v %+v", err, locks)
			}
			// With actions off the release is refused; with --actions a
			// release of another token is refused by the backend (409), so
			// the lock stays held in both cases.
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"api/actions/force-release",
				strings.NewReader(`{"backend":"redis","name":"nightly","token":1}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := http.StatusForbidden
			if actions {
				want = http.StatusConflict
			}
			if resp.StatusCode != want {
				t.Errorf("actions=%v: force-release of another token: %s, want %d", actions, resp.Status, want)
			}
		})
	}
	if i, err := p.Inspect(t.Context(), "nightly"); err != nil || !i.Held || i.Token != lease.Token {
		t.Errorf("nightly after the refused releases: %+v %v", i, err)
	}
}

// baton serve checks every backend at start: one it cannot use is named
// with what to do, and the page is served all the same.
func TestServeReportsBackends(t *testing.T) {
	t.Parallel()
	bad := pgenv.Schema(t) // not migrated
	got, _ := startServe(t, []string{"BATON_REDIS_URL=", "BATON_POSTGRES_URL="}, 3,
		"--redis", testenv.RedisURL(t), "--redis-prefix", testenv.Prefix(t), "--postgres", bad.URL, "--addr", "127.0.0.1:0")
	if len(got) != 3 || !strings.Contains(got[0], "status page on") || !strings.HasPrefix(got[1], "baton: redis (") || !strings.Contains(got[1], "): reached: ") ||
		!strings.HasPrefix(got[2], "baton: postgres (") || !strings.Contains(got[2], "): NOT reached: ") || !strings.Contains(got[2], "run Migrate") || !strings.Contains(got[2], "served anyway") {
		t.Errorf("baton serve's start lines:\n%s", strings.Join(got, "\n"))
	}
}

// baton serve answers only for loopback names, IP addresses and
// --allowed-host, and with --token-file only requests with the token;
// /healthz answers without it.
func TestServeGuards(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("c0rrect-horse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, err := startServe(t, []string{"BATON_REDIS_URL=", "BATON_POSTGRES_URL=", "BATON_SERVE_TOKEN="}, 1,
		"--redis", testenv.RedisURL(t), "--redis-prefix", testenv.Prefix(t), "--addr", "127.0.0.1:0",
		"--allowed-host", "ops.example.com", "--token-file", tokenFile, "--actions")
	if len(lines) == 0 {
		t.Fatalf("baton serve printed no address: %v", err)
	}
	if !strings.Contains(lines[0], "token required") {
		t.Errorf("start line %q does not say a token is required", lines[0])
	}
	base := strings.Fields(strings.TrimPrefix(lines[0], "baton: status page on "))[0]
	get := func(path, host, token string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Host = host
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, host, token string
		want              int
	}{
		{"api/jobs", "evil.example:8090", "c0rrect-horse", http.StatusForbidden},
		{"api/jobs", "ops.example.com", "c0rrect-horse", http.StatusOK},
		{"api/jobs", "127.0.0.1", "", http.StatusUnauthorized},
		{"api/jobs", "localhost:1", "wrong", http.StatusUnauthorized},
		{"api/jobs", "localhost:1", "c0rrect-horse", http.StatusOK},
		{"healthz", "localhost", "", http.StatusOK},
		{"healthz", "evil.example", "", http.StatusForbidden},
		{"readyz", "localhost", "c0rrect-horse", http.StatusOK},
	} {
		if got := get(c.path, c.host, c.token); got != c.want {
			t.Errorf("GET %s Host %s token %q: %d, want %d", c.path, c.host, c.token, got, c.want)
		}
	}
}
