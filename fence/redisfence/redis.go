package redisfence

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/fence"
)

var (
	//go:embed set.lua
	setLua    string
	setScript = goredis.NewScript(setLua)
	//go:embed get.lua
	getLua    string
	getScript = goredis.NewScript(getLua)
)

// Guard stores fenced values in Redis hashes (fields "value" and "fence"):
// a write is applied only for a token not smaller than the stored fence,
// checked and written in one script. Any go-redis client works (*Client,
// *ClusterClient, *Ring, failover clients). Keys get no TTL: the fence must
// live as long as the value it guards. A Redis that loses data (a restart
// without persistence, a failover) loses fences too; see package fence.
type Guard struct {
	c goredis.Scripter
}

// NewGuard returns a Guard on c. A nil c is a *fence.ValidationError.
func NewGuard(c goredis.Scripter) (*Guard, error) {
	if c == nil {
		return nil, invalid("client", "<nil>", "must not be nil", fence.ErrInvalid)
	}
	return &Guard{c: c}, nil
}

// Set stores value under key if token is not smaller than the key's stored
// fence (or the key does not exist), and records token as the fence. It
// returns an error matching fence.ErrStaleToken otherwise. Repeating a Set (as a
// client retry does) is harmless: equal tokens are accepted. When ctx is a
// lock's context (or derived from one) whose trust window has passed, it
// sends nothing and returns an error matching baton.ErrLockLost.
func (r *Guard) Set(ctx context.Context, key string, token int64, value string) error {
	if err := checkCall(ctx, r != nil && r.c != nil); err != nil {
		return err
	}
	if key == "" {
		return invalid("key", key, "must not be empty", fence.ErrInvalid)
	}
	if err := checkToken(token); err != nil {
		return err
	}
	if err := checkLease(ctx); err != nil {
		return err
	}
	res, err := setScript.Run(ctx, r.c, []string{key}, strconv.FormatInt(token, 10), value).Result()
	if err != nil {
		return fmt.Errorf("redisfence: set %q: %w", key, err)
	}
	if s, ok := res.(string); ok {
		last, _ := strconv.ParseInt(s, 10, 64)
		return stale(token, last)
	}
	return nil
}

// Get returns the value under key and the fence of the write that stored it,
// or fence.ErrNotFound.
func (r *Guard) Get(ctx context.Context, key string) (value string, token int64, err error) {
	if err := checkCall(ctx, r != nil && r.c != nil); err != nil {
		return "", 0, err
	}
	if key == "" {
		return "", 0, invalid("key", key, "must not be empty", fence.ErrInvalid)
	}
	res, err := getScript.Run(ctx, r.c, []string{key}).Result()
	if errors.Is(err, goredis.Nil) {
		return "", 0, fmt.Errorf("%w: redis key %q", fence.ErrNotFound, key)
	}
	if err != nil {
		return "", 0, fmt.Errorf("redisfence: get %q: %w", key, err)
	}
	vals, ok := res.([]any)
	if !ok || len(vals) != 2 {
		return "", 0, fmt.Errorf("redisfence: get %q: unexpected reply %v", key, res)
	}
	value, _ = vals[0].(string)
	if s, ok := vals[1].(string); ok {
		token, _ = strconv.ParseInt(s, 10, 64)
	}
	return value, token, nil
}
