package ratewire_test

import (
	"errors"
	"slices"
	"strconv"
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

func TestParseReply(t *testing.T) {
	v, err := ratewire.ParseReply(" 1 1700000000000000  -5\t7 ")
	if err != nil || !slices.Equal(v, []int64{1, 1700000000000000, -5, 7}) {
		t.Errorf("ParseReply = %v, %v", v, err)
	}
	if _, err := ratewire.ParseReply("1 x"); !errors.Is(err, strconv.ErrSyntax) {
		t.Errorf("malformed: %v, want strconv.ErrSyntax", err)
	}
}
