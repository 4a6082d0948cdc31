package ratelimittest

import (
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/lockprovider/memory"
)

// fakeClock is the memory provider's server clock in tests that need exact
// times.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// memoryAt returns a memory provider whose server clock is c.
func memoryAt(t testing.TB, c *fakeClock) *memory.Provider {
	return newMemory(t, &memory.Config{Now: c.Now})
}

// epoch is a window-aligned instant for deterministic tests.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
