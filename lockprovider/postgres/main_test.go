package postgres_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
)

// Every test but the fault tests calls t.Parallel: each works in a schema
// of its own (pgenv.Schema), so none sees another's rows, and the suite
// mostly waits on the server and on lease lengths.
func TestMain(m *testing.M) { testenv.Main(m) }
