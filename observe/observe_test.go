package observe_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/observe"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type ctxKey struct{}

// tagger derives a context on begin events, as a tracing adapter does.
type tagger struct{ tag string }

func (t *tagger) Observe(ctx context.Context, e observe.Event) context.Context {
	if e.Kind.Begins() {
		prev, _ := ctx.Value(ctxKey{}).(string)
		return context.WithValue(ctx, ctxKey{}, prev+t.tag)
	}
	return ctx
}

func TestJoin(t *testing.T) {
	var typedNil *tagger
	if observe.Join() != nil || observe.Join(nil, nil) != nil || observe.Join(typedNil) != nil {
		t.Fatal("Join of nothing (or only nils) must be nil, so the caller's nil check skips all work")
	}
	a := &tagger{"a"}
	if got := observe.Join(nil, a); got != a {
		t.Fatalf("Join of one observer = %v, want the observer itself", got)
	}
	var seen []string
	rec := observe.Func(func(ctx context.Context, e observe.Event) {
		tag, _ := ctx.Value(ctxKey{}).(string)
		seen = append(seen, e.Kind.String()+":"+tag)
	})
	obs := observe.Join(observe.Join(a, &tagger{"b"}), rec)
	ctx := obs.Observe(context.Background(), observe.Event{Kind: observe.JobStarted})
	if got := ctx.Value(ctxKey{}); got != "ab" {
		t.Fatalf("begin event context carries %v, want each observer's derivation in order (ab)", got)
	}
	end := obs.Observe(ctx, observe.Event{Kind: observe.JobFinished})
	if end != ctx {
		t.Fatal("an end event's Observe must return the context it was given")
	}
	if want := "job.started:ab job.finished:ab"; strings.Join(seen, " ") != want {
		t.Fatalf("the last observer saw %q, want %q", strings.Join(seen, " "), want)
	}
}

func TestKinds(t *testing.T) {
	names := map[string]observe.Kind{}
	for k := observe.Kind(1); k < 128; k++ {
		s := k.String()
		if strings.HasPrefix(s, "kind(") {
			continue
		}
		if prev, dup := names[s]; dup {
			t.Fatalf("kinds %d and %d share the name %q", prev, k, s)
		}
		names[s] = k
		if k.Begins() != (k.Ends() != 0) {
			t.Errorf("%v: Begins %v but Ends %v", k, k.Begins(), k.Ends())
		}
	}
	if len(names) != 18 {
		t.Errorf("%d named kinds, want 18: a new kind needs a name", len(names))
	}
	if got := observe.Kind(200).String(); got != "kind(200)" {
		t.Errorf("unknown kind prints %q", got)
	}
	if observe.JobAttempt.Ends() != observe.JobDone || observe.JobStarted.Ends() != observe.JobFinished {
		t.Error("begin events must name their end events")
	}
}
