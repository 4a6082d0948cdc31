package redisfence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/redisfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func mustInvalid(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	var ve *fence.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, sentinel) || !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("%s: got %v, want a *fence.ValidationError matching %v", what, err, sentinel)
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := redisenv.Client(t)
	key := testenv.Prefix(t) + "doc"
	t.Cleanup(func() { c.Del(context.Background(), key) })
	r, err := redisfence.NewGuard(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := redisfence.NewGuard(nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("nil client: %v", err)
	}
	mustInvalid(t, "empty key", r.Set(ctx, "", 1, "v"), fence.ErrInvalid)
	mustInvalid(t, "token 0", r.Set(ctx, key, 0, "v"), fence.ErrInvalidToken)
	if _, _, err := r.Get(ctx, key); !errors.Is(err, fence.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v", err)
	}
	// A nil ctx or a zero Guard would panic in go-redis: refused first.
	var nilCtx context.Context
	mustInvalid(t, "Set nil ctx", r.Set(nilCtx, key, 1, "v"), fence.ErrInvalid)
	_, _, err = r.Get(nilCtx, key)
	mustInvalid(t, "Get nil ctx", err, fence.ErrInvalid)
	var zero redisfence.Guard
	mustInvalid(t, "zero Guard Set", zero.Set(ctx, key, 1, "v"), fence.ErrInvalid)
	_, _, err = zero.Get(ctx, key)
	mustInvalid(t, "zero Guard Get", err, fence.ErrInvalid)

	// Tokens above 2^53 compare exactly (Lua numbers are doubles).
	const big = int64(1) << 60
	steps := []struct {
		tok   int64
		val   string
		stale bool
	}{
		{5, "a", false}, {5, "b", false}, {4, "c", true}, {9, "d", false}, {10, "e", false},
		{big, "f", false}, {big - 1, "g", true}, {big + 1, "h", false}, {big, "i", true},
	}
	for _, s := range steps {
		err := r.Set(ctx, key, s.tok, s.val)
		if s.stale != errors.Is(err, fence.ErrStaleToken) || !s.stale && err != nil {
			t.Fatalf("Set(%d, %q): %v, want stale=%v", s.tok, s.val, err, s.stale)
		}
	}
	if v, tok, err := r.Get(ctx, key); err != nil || v != "h" || tok != big+1 {
		t.Fatalf("Get: %q %d %v", v, tok, err)
	}
}
