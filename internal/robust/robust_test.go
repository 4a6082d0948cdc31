package robust

import (
	"slices"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The same seed draws the same schedule; the faults do not overlap and
// the network is healed a second before the run ends.
func TestPlan(t *testing.T) {
	const d = 10 * time.Second
	a, b := Plan(42, "redis", d, 2, 1, 1), Plan(42, "redis", d, 2, 1, 1)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Fatalf("same seed, different plans:\n%v\n%v", a, b)
	}
	if slices.Equal(a, Plan(43, "redis", d, 2, 1, 1)) || slices.Equal(a, Plan(42, "postgres", d, 2, 1, 1)) {
		t.Error("another seed or backend drew the same plan")
	}
	var end time.Duration
	for _, f := range a {
		if f.At < end || f.For <= 0 || f.For > MaxFault || f.At+f.For > d-time.Second {
			t.Errorf("fault %v (previous ended at %v)", f, end)
		}
		end = f.At + f.For
	}
	if p := Plan(1, "x", d, 0, 0, 0); p != nil {
		t.Errorf("plan with no targets: %v", p)
	}
}
