package notify

import (
	"slices"
	"testing"
	"time"
)

func TestHub(t *testing.T) {
	var h Hub
	type call struct{ a, b bool }
	var adds, removes []call
	add := func(key string, ch chan<- struct{}) *Sub {
		return h.Add(key, ch, func(firstOfKey, first bool) { adds = append(adds, call{firstOfKey, first}) })
	}
	after := 0
	remove := func(lastOfKey, last bool) func() {
		removes = append(removes, call{lastOfKey, last})
		return func() { after++ }
	}
	a1, a2, b := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	sa1, sa2, sb := add("a", a1), add("a", a2), add("b", b)
	if want := []call{{true, true}, {false, false}, {true, false}}; !slices.Equal(adds, want) {
		t.Fatalf("Add hooks %v, want %v", adds, want)
	}
	keys := h.Keys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a", "b"}) {
		t.Fatalf("Keys %v", keys)
	}
	h.Signal("a")
	h.Signal("a") // a full buffer: the send is dropped, not blocked
	if len(a1) != 1 || len(a2) != 1 || len(b) != 0 {
		t.Fatalf("after Signal(a): %d %d %d", len(a1), len(a2), len(b))
	}
	<-a1
	<-a2
	h.SignalAll()
	if len(a1) != 1 || len(a2) != 1 || len(b) != 1 {
		t.Fatalf("after SignalAll: %d %d %d", len(a1), len(a2), len(b))
	}
	stop := h.Stopper(sa1, remove)
	stop()
	stop()
	h.Remove(sa2, remove)
	h.Remove(sb, remove)
	h.Remove(sb, remove)
	if want := []call{{false, false}, {true, false}, {true, true}}; !slices.Equal(removes, want) {
		t.Fatalf("Remove hooks %v, want %v", removes, want)
	}
	if after != 3 {
		t.Fatalf("after functions called %d times, want 3", after)
	}
	if len(h.Keys()) != 0 {
		t.Fatalf("Keys %v after removing all", h.Keys())
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Min: 50 * time.Millisecond, Max: 300 * time.Millisecond}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	b.Reset()
	got = append(got, b.Next())
	ms := time.Millisecond
	if want := []time.Duration{50 * ms, 100 * ms, 200 * ms, 300 * ms, 300 * ms, 50 * ms}; !slices.Equal(got, want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
}
