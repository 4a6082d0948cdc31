package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/lockprovider"
)

func notifyCases() []testCase {
	return []testCase{
		{"SignalledOnRelease", testNotifySignalled},
		{"StopUnregisters", testNotifyStop},
		{"NonBlocking", testNotifyNonBlocking},
	}
}

func (e *env) notifier() lockprovider.ReleaseNotifier {
	e.t.Helper()
	rn, ok := e.p.(lockprovider.ReleaseNotifier)
	if !ok {
		e.t.Skip("provider does not implement lockprovider.ReleaseNotifier")
	}
	return rn
}

func (e *env) register(rn lockprovider.ReleaseNotifier, name string, ch chan<- struct{}) func() {
	e.t.Helper()
	stop, err := rn.NotifyRelease(e.ctx, name, ch)
	if err != nil {
		e.t.Fatalf("NotifyRelease(%q): %v", name, err)
	}
	e.t.Cleanup(stop)
	return stop
}

func (e *env) cycle(name string) {
	e.t.Helper()
	owner := lockprovider.NewOwner()
	e.mustAcquire(name, owner, long, 0)
	e.mustRelease(name, owner)
}

func (e *env) wantSignal(ch <-chan struct{}, what string) {
	e.t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		e.t.Fatalf("%s: no release notification within %v", what, waitLimit)
	}
}

// A registration made before a release is signalled by it.
func testNotifySignalled(e *env) {
	rn := e.notifier()
	name := e.name()
	ch := make(chan struct{}, 1)
	e.register(rn, name, ch)
	e.cycle(name)
	e.wantSignal(ch, "first release")
	e.cycle(name)
	e.wantSignal(ch, "second release")
}

// After stop, a channel is no longer signalled; stop may be called twice;
// releases of other names do not signal.
func testNotifyStop(e *env) {
	rn := e.notifier()
	name, other := e.name(), e.name()
	stopped := make(chan struct{}, 1)
	stop := e.register(rn, name, stopped)
	stop()
	stop()
	elsewhere := make(chan struct{}, 1)
	e.register(rn, other, elsewhere)
	control := make(chan struct{}, 1)
	e.register(rn, name, control)
	e.cycle(name)
	// The control registration proves the release was announced, so the
	// others would have been signalled by now if they were going to be.
	e.wantSignal(control, "release with an active registration")
	time.Sleep(20 * time.Millisecond) // grace for a wrong signal behind the control one
	select {
	case <-stopped:
		e.t.Error("a stopped registration was signalled")
	case <-elsewhere:
		e.t.Error("a registration for another name was signalled")
	default:
	}
}

// A channel nobody reads does not block releases or other registrations.
func testNotifyNonBlocking(e *env) {
	rn := e.notifier()
	name := e.name()
	e.register(rn, name, make(chan struct{})) // unbuffered, never read
	ch := make(chan struct{}, 1)
	e.register(rn, name, ch)
	for i := range 3 {
		e.cycle(name)
		e.wantSignal(ch, "release "+string(rune('1'+i)))
	}
}
