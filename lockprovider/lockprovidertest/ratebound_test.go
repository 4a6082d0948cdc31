package lockprovidertest

import (
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// replay admits what the algorithm admits: the arrivals of a burst at one
// instant are admitted up to the capacity.
func TestReplay(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	all := make([]decision, 10)
	for i := range all {
		all[i] = decision{at: at}
	}
	for _, alg := range rateAlgorithms {
		if n := replay(t, batontype.RateLimit{Algorithm: alg, Rate: 4, Period: time.Second}, all); n != 4 {
			t.Errorf("%s: replay admitted %d of a burst of 10; want the capacity 4", alg, n)
		}
	}
}
