package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// baton serve says at start which backends it reached (a PostgreSQL on a
// dead port is NOT reached, and the page still starts), and with --limit
// the Rate limits view shows what remains and each key's state.
func TestServeReachAndLimit(t *testing.T) {
	t.Parallel()
	url, prefix := testenv.RedisURL(t), testenv.Prefix(t)
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	lim := batontype.RateLimit{Algorithm: batontype.TokenBucket, Rate: 10, Period: time.Minute}
	for key, n := range map[string]int64{"api:alice": 10, "api:bob": 2} {
		if _, err := p.RateLimit(t.Context(), lockprovider.RateRequest{Key: key, N: n, Limits: []batontype.RateLimit{lim}}); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := startServe(t, []string{"BATON_REDIS_URL=", "BATON_POSTGRES_URL="}, 3,
		"--redis", url, "--redis-prefix", prefix, "--postgres", "postgres://postgres@127.0.0.1:1/test?connect_timeout=2",
		"--limit", "token_bucket:10/1m", "--addr", "127.0.0.1:0", "--timeout", "3s")
	if err != nil {
		t.Fatalf("baton serve printed %q, then %v", lines, err)
	}
	if !strings.HasPrefix(lines[0], "baton: status page on http://") ||
		lines[1] != `baton: redis (prefix "`+prefix+`" on `+strings.TrimPrefix(url, "redis://")+`): reached: 0 scheduler instances, 0 jobs, 0 locks held` ||
		!strings.HasPrefix(lines[2], "baton: postgres (schema search_path, table baton_locks on 127.0.0.1:1/test): NOT reached: ") {
		t.Errorf("baton serve printed:\n%s", strings.Join(lines, "\n"))
	}
	base := strings.Fields(strings.TrimPrefix(lines[0], "baton: status page on "))[0]
	resp, err := http.Get(base + "api/limits")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var limits struct {
		Peeked bool
		Limits []struct {
			Key, Backend, State string
			Remaining           *int64
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&limits); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range limits.Limits {
		if l.Remaining != nil {
			got[l.Key] = l.State
		}
	}
	if !limits.Peeked || got["api:alice"] != "over" || got["api:bob"] != "ok" {
		t.Errorf("api/limits with --limit: %+v", limits)
	}
}
