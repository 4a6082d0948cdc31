package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/clock"
)

func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if !clock.Sleep(ctx, time.Millisecond) || !clock.Sleep(ctx, 0) {
		t.Error("a live context: want true")
	}
	cancel()
	if clock.Sleep(ctx, 0) || clock.Sleep(ctx, time.Hour) {
		t.Error("a done context: want false at once")
	}
}
