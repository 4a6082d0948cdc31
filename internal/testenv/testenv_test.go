package testenv

import (
	"context"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// The harness's own RESP client: enough for INFO, PING and error replies.
func TestRedisDo(t *testing.T) {
	ctx := context.Background()
	r := StartRedis(t)
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := redisDo(ctx, r.Addr(), "SET", "k", "v"); err != nil || v != "OK" {
		t.Fatalf("SET: %v, %v", v, err)
	}
	if v, err := redisDo(ctx, r.Addr(), "INCR", "n"); err != nil || v != int64(1) {
		t.Fatalf("INCR: %v, %v", v, err)
	}
	if v, err := redisDo(ctx, r.Addr(), "GET", "missing"); err != nil || v != nil {
		t.Fatalf("GET missing: %v, %v", v, err)
	}
	if v, err := redisDo(ctx, r.Addr(), "MGET", "k", "missing"); err != nil || len(v.([]any)) != 2 || v.([]any)[0] != "v" {
		t.Fatalf("MGET: %v, %v", v, err)
	}
	if _, err := redisDo(ctx, r.Addr(), "NOSUCHCOMMAND"); err == nil || !strings.Contains(err.Error(), "ERR") {
		t.Fatalf("unknown command: %v", err)
	}
	if info, err := redisString(ctx, r.Addr(), "INFO", "server"); err != nil || !strings.Contains(info, "redis_version:") {
		t.Fatalf("INFO: %.40q, %v", info, err)
	}
}
