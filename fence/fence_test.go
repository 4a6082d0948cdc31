package fence_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func mustInvalid(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	var ve *fence.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, sentinel) || !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("%s: got %v, want a *ValidationError matching %v", what, err, sentinel)
	}
}

func TestResource(t *testing.T) {
	t.Parallel()
	var r fence.Resource
	var ran []int64
	do := func(tok int64) error { return r.Do(tok, func() error { ran = append(ran, tok); return nil }) }
	for _, tok := range []int64{3, 3, 5} {
		if err := do(tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := do(4); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("stale: %v", err)
	}
	mustInvalid(t, "token 0", do(0), fence.ErrInvalidToken)
	if r.Last() != 5 || len(ran) != 3 {
		t.Fatalf("last %d ran %v", r.Last(), ran)
	}
	boom := errors.New("boom")
	if err := r.Do(6, func() error { return boom }); err != boom || r.Last() != 6 {
		t.Fatalf("fn error: %v, last %d", err, r.Last())
	}

	// Concurrent writers: the value always comes from the largest token.
	var v fence.Value[int64]
	var wg sync.WaitGroup
	for tok := int64(1); tok <= 100; tok++ {
		wg.Go(func() { _ = v.Write(tok, tok*10) })
	}
	wg.Wait()
	if val, tok := v.Read(); tok != 100 || val != 1000 {
		t.Fatalf("value %d token %d", val, tok)
	}
}
