package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/baton-go/baton/examples/cronapp/internal/localdb"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// closedURL is a Redis URL on which nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "redis://" + addr + "/0"
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	shared := testenv.RedisURL(t)

	t.Run("given URL is used", func(t *testing.T) {
		b := &Backends{}
		u, err := resolve(ctx, "Redis", shared, closedURL(t), pingRedis, nil, b, io.Discard)
		if err != nil || u != shared || len(b.servers) != 0 {
			t.Errorf("got %q, %v, %d servers", u, err, len(b.servers))
		}
	})
	t.Run("given URL that does not answer fails", func(t *testing.T) {
		_, err := resolve(ctx, "Redis", closedURL(t), shared, pingRedis, nil, &Backends{}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "compose.yaml") {
			t.Errorf("err %v, want it to say how to get servers", err)
		}
	})
	t.Run("default that answers is used", func(t *testing.T) {
		u, err := resolve(ctx, "Redis", "", shared, pingRedis, nil, &Backends{}, io.Discard)
		if err != nil || u != shared {
			t.Errorf("got %q, %v", u, err)
		}
	})
	t.Run("no default starts a private server", func(t *testing.T) {
		b := &Backends{}
		defer b.Close()
		u, err := resolve(ctx, "Redis", "", closedURL(t), pingRedis, localdb.StartRedis, b, io.Discard)
		if err != nil || len(b.servers) != 1 || u != b.servers[0].URL {
			t.Fatalf("got %q, %v, %d servers", u, err, len(b.servers))
		}
		if err := pingRedis(ctx, u); err != nil {
			t.Errorf("private server: %v", err)
		}
	})
	t.Run("no default and no binaries says what to do", func(t *testing.T) {
		none := func() (*localdb.Server, error) {
			return nil, fmt.Errorf("%w: redis-server not on PATH", localdb.ErrNoBinaries)
		}
		_, err := resolve(ctx, "Redis", "", closedURL(t), pingRedis, none, &Backends{}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "docker compose -f examples/cronapp/compose.yaml up -d") {
			t.Errorf("err %v, want the compose command", err)
		}
	})
}
