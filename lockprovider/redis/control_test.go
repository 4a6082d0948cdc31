package redis_test

import (
	"testing"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/redisenv"
)

// Every Control operation is one command (the script cache warmed first).
func TestControlOneRoundTrip(t *testing.T) {
	c := redisenv.Client(t)
	p, _ := newProvider(t, c)
	cnt := &counter{}
	c.AddHook(cnt)
	ctx := t.Context()
	if _, err := p.ControlState(ctx); err != nil { // loads the script
		t.Fatal(err)
	}
	one := func(what string, f func() error) {
		t.Helper()
		before := cnt.n.Load()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := cnt.n.Load() - before; n != 1 {
			t.Errorf("%s sent %d commands, want 1", what, n)
		}
	}
	var r batontype.RunRequest
	one("SetPaused", func() error { return p.SetPaused(ctx, "job", true) })
	one("RequestRun", func() (err error) { r, err = p.RequestRun(ctx, batontype.RunRequest{Job: "job"}); return err })
	one("ControlState", func() error { _, err := p.ControlState(ctx); return err })
	one("ClaimRun", func() error { _, err := p.ClaimRun(ctx, r.ID); return err })
}
