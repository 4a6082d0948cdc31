package memory

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// Entries whose limits are full again are dropped: at once when a decision
// finds them dead, and by the periodic sweep otherwise, so the map stays
// bounded by the keys active within their period.
func TestRateEntriesSwept(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p, err := New(&Config{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	if err != nil {
		t.Fatal(err)
	}
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	size := func() int { p.rate.mu.Lock(); defer p.rate.mu.Unlock(); return len(p.rate.entries) }
	ctx := context.Background()
	limits := []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 5, Period: time.Second},
		{Algorithm: batontype.SlidingLog, Rate: 5, Period: time.Second},
		{Algorithm: batontype.SlidingWindow, Rate: 5, Period: time.Second},
		{Algorithm: batontype.TokenBucket, Rate: 5, Period: time.Second},
		{Algorithm: batontype.GCRA, Rate: 5, Period: time.Second},
	}
	for i := range 500 {
		if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "k" + strconv.Itoa(i), N: 1, Limits: limits}); err != nil {
			t.Fatal(err)
		}
	}
	if n := size(); n != 500*len(limits) {
		t.Fatalf("%d entries after 500 keys × 5 limits", n)
	}
	// A peek on a fresh key stores nothing.
	if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "peek", N: 0, Limits: limits}); err != nil {
		t.Fatal(err)
	}
	if n := size(); n != 500*len(limits) {
		t.Fatalf("a peek added entries: %d", n)
	}
	// Two periods later every limit is full again (the sliding window
	// counter lasts longest: until its window has slid out); the next
	// sweep, within sweepEvery decisions, drops them all.
	advance(2 * time.Second)
	for range sweepEvery {
		if _, err := p.RateLimit(ctx, lockprovider.RateRequest{Key: "live", N: 0, Limits: limits[:1]}); err != nil {
			t.Fatal(err)
		}
	}
	if n := size(); n != 0 {
		t.Fatalf("%d entries left after the sweep; want 0", n)
	}
}
