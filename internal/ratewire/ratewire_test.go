package ratewire_test

import (
	"slices"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/ratewire"
)

func TestArgs(t *testing.T) {
	limits := []batontype.RateLimit{
		{Algorithm: batontype.TokenBucket, Rate: 10, Period: 4 * time.Second, Burst: 20},
		{Algorithm: batontype.FixedWindow, Rate: 3, Period: time.Minute},
	}
	ids, args := ratewire.Args(limits)
	if len(ids) != 2 || ids[0] != ratewire.ID(limits[0]) || ids[1] != ratewire.ID(limits[1]) {
		t.Errorf("ids = %q", ids)
	}
	want := []int64{
		int64(batontype.TokenBucket), 10, 4_000_000, limits[0].Capacity(), 400_000, 1,
		int64(batontype.FixedWindow), 3, 60_000_000, limits[1].Capacity(), 20_000_000, 1,
	}
	if !slices.Equal(args, want) {
		t.Errorf("args = %v, want %v", args, want)
	}
}
