package notify

import "sync"

// Hub holds the channels registered per key and signals them. The zero
// value is ready to use; a Hub is safe for concurrent use.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[*Sub]struct{} // by key
	n    int                          // registrations
}

// Sub is one registration.
type Sub struct {
	key string
	ch  chan<- struct{}
}

// Add registers ch under key. When hook is not nil it is called under the
// hub's lock, after the registration, with whether key had no
// registration before (firstOfKey) and whether the hub had none (first).
func (h *Hub) Add(key string, ch chan<- struct{}, hook func(firstOfKey, first bool)) *Sub {
	s := &Sub{key: key, ch: ch}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = make(map[string]map[*Sub]struct{})
	}
	set := h.subs[key]
	firstOfKey := set == nil
	if firstOfKey {
		set = make(map[*Sub]struct{})
		h.subs[key] = set
	}
	set[s] = struct{}{}
	h.n++
	if hook != nil {
		hook(firstOfKey, h.n == 1)
	}
	return s
}

// Remove unregisters s. When hook is not nil it is called under the hub's
// lock, after the removal, with whether s's key has no registration left
// (lastOfKey) and whether the hub has none (last); the function it returns,
// if not nil, is called after the lock is released, for a teardown that
// waits (on a goroutine that may be signalling). Removing s again does
// nothing and does not call hook.
func (h *Hub) Remove(s *Sub, hook func(lastOfKey, last bool) (after func())) {
	var after func()
	h.mu.Lock()
	set := h.subs[s.key]
	if _, ok := set[s]; ok {
		delete(set, s)
		lastOfKey := len(set) == 0
		if lastOfKey {
			delete(h.subs, s.key)
		}
		h.n--
		if hook != nil {
			after = hook(lastOfKey, h.n == 0)
		}
	}
	h.mu.Unlock()
	if after != nil {
		after()
	}
}

// Stopper returns a function that calls Remove(s, hook) once, however
// often it is called: the stop function of a registration.
func (h *Hub) Stopper(s *Sub, hook func(lastOfKey, last bool) (after func())) func() {
	var once sync.Once
	return func() { once.Do(func() { h.Remove(s, hook) }) }
}

// Signal signals every channel registered under key.
func (h *Hub) Signal(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[key] {
		send(s.ch)
	}
}

// SignalAll signals every registered channel, for when signals may have
// been lost (a transport reconnected).
func (h *Hub) SignalAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.subs {
		for s := range set {
			send(s.ch)
		}
	}
}

// Keys returns the keys that have registrations, in no order.
func (h *Hub) Keys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.subs))
	for k := range h.subs {
		keys = append(keys, k)
	}
	return keys
}

func send(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
