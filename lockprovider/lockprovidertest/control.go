package lockprovidertest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// controlCases check lockprovider.Control: paused flags, run requests
// claimed exactly once under concurrency, request expiry, change
// announcements and validation.
func controlCases() []testCase {
	return []testCase{
		{"PauseAndResume", testControlPause},
		{"PauseSpans", testControlPauseSpans},
		{"RequestAndClaim", testControlRequest},
		{"ClaimExactlyOnce", testControlClaimOnce},
		{"RequestExpires", testControlExpiry},
		{"Watch", testControlWatch},
		{"Validation", testControlValidation},
		{"DoneContext", testControlDone},
		{"NilContext", testControlNilContext},
	}
}

func (e *env) control() lockprovider.Control { return e.p.(lockprovider.Control) }

func (e *env) controlState() batontype.ControlState {
	e.t.Helper()
	st, err := e.control().ControlState(e.ctx)
	if err != nil {
		e.t.Fatalf("ControlState: %v", err)
	}
	return st
}

func (e *env) setPaused(job string, paused bool) {
	e.t.Helper()
	if err := e.control().SetPaused(e.ctx, job, paused); err != nil {
		e.t.Fatalf("SetPaused(%q, %v): %v", job, paused, err)
	}
}

// Flags are set and cleared idempotently and listed sorted; a fresh
// backend has none.
func testControlPause(e *env) {
	if st := e.controlState(); len(st.Paused) != 0 || len(st.Requests) != 0 || len(st.Pauses) != 0 {
		e.t.Fatalf("fresh backend: ControlState %+v, want empty", st)
	}
	base := e.name()
	b, a := base+"-b", base+"-a"
	e.setPaused(b, true)
	e.setPaused(a, true)
	e.setPaused(a, true)
	if got := e.controlState().Paused; !slices.Equal(got, []string{a, b}) {
		e.t.Fatalf("Paused %q, want %q", got, []string{a, b})
	}
	if st := e.controlState(); !st.IsPaused(a) || st.IsPaused(a+"x") {
		e.t.Errorf("IsPaused disagrees with Paused %q", st.Paused)
	}
	e.setPaused(b, false)
	e.setPaused(b, false)
	e.setPaused(e.name(), false) // never paused
	if got := e.controlState().Paused; !slices.Equal(got, []string{a}) {
		e.t.Fatalf("Paused after resuming %q: %q, want %q", b, got, []string{a})
	}
}

// setPausedAt sets or clears the flag and returns the local times
// bracketing the call, widened by inspectTol for the backend's clock and
// its resolution.
func (e *env) setPausedAt(job string, paused bool) (lo, hi time.Time) {
	e.t.Helper()
	lo = time.Now().Add(-inspectTol)
	e.setPaused(job, paused)
	return lo, time.Now().Add(inspectTol)
}

func within(t, lo, hi time.Time) bool { return !t.Before(lo) && !t.After(hi) }

// The backend remembers when a pause began and ended (its clock): the
// current pause and the latest ended one per job. Setting a set flag
// keeps From; clearing a clear flag invents no span; a new pause after a
// resume starts a new span.
func testControlPauseSpans(e *env) {
	job, other := e.name(), e.name()
	lo, hi := e.setPausedAt(job, true)
	sp := e.controlState().PausesOf(job)
	if len(sp) != 1 || !sp[0].Until.IsZero() || !within(sp[0].From, lo, hi) {
		e.t.Fatalf("paused: spans %+v, want one open span from within [%v, %v]", sp, lo, hi)
	}
	from1 := sp[0].From
	e.setPaused(job, true) // already paused: From stays
	if sp := e.controlState().PausesOf(job); len(sp) != 1 || !sp[0].From.Equal(from1) || !sp[0].Until.IsZero() {
		e.t.Fatalf("paused again: spans %+v, want the open span from %v", sp, from1)
	}
	lo, hi = e.setPausedAt(job, false)
	st := e.controlState()
	sp = st.PausesOf(job)
	if len(sp) != 1 || !sp[0].From.Equal(from1) || !within(sp[0].Until, lo, hi) || sp[0].Until.Before(sp[0].From) {
		e.t.Fatalf("resumed: spans %+v, want one from %v until within [%v, %v]", sp, from1, lo, hi)
	}
	until1 := sp[0].Until
	if !batontype.InPause(sp, from1) || !batontype.InPause(sp, until1) || batontype.InPause(sp, from1.Add(-time.Millisecond)) ||
		batontype.InPause(sp, until1.Add(time.Millisecond)) || len(st.PausesOf(other)) != 0 {
		e.t.Errorf("InPause disagrees with the span %+v", sp[0])
	}
	e.setPaused(job, false)   // already resumed: nothing changes
	e.setPaused(other, false) // never paused: no span
	st = e.controlState()
	if sp := st.PausesOf(job); len(sp) != 1 || !sp[0].From.Equal(from1) || !sp[0].Until.Equal(until1) {
		e.t.Fatalf("resumed again: spans %+v, want the one ended span", sp)
	}
	if sp := st.PausesOf(other); len(sp) != 0 {
		e.t.Fatalf("a job never paused has spans %+v", sp)
	}
	e.setPaused(job, true)
	sp = e.controlState().PausesOf(job)
	if len(sp) != 2 || !sp[0].From.Equal(from1) || !sp[0].Until.Equal(until1) || !sp[1].Until.IsZero() || sp[1].From.Before(until1) {
		e.t.Fatalf("paused after the resume: spans %+v, want the ended span then a new open one from at least %v", sp, until1)
	}
	from2 := sp[1].From
	e.setPaused(job, false)
	sp = e.controlState().PausesOf(job)
	if len(sp) != 1 || !sp[0].From.Equal(from2) || sp[0].Until.Before(from2) {
		e.t.Fatalf("resumed twice: spans %+v, want only the latest, from %v", sp, from2)
	}
}

// A request is listed with its fields until claimed, then gone; a second
// claim finds nothing.
func testControlRequest(e *env) {
	c := e.control()
	job := e.name()
	before := time.Now()
	r1, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: job, RequestedBy: "operator"})
	if err != nil {
		e.t.Fatalf("RequestRun: %v", err)
	}
	after := time.Now()
	r2, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: job, TTL: time.Hour})
	if err != nil {
		e.t.Fatalf("RequestRun: %v", err)
	}
	if r1.ID == "" || r1.ID == r2.ID || r1.Job != job || r1.RequestedBy != "operator" {
		e.t.Fatalf("RequestRun returned %+v and %+v: want distinct IDs, the job and RequestedBy", r1, r2)
	}
	// Within the call (the backend's clock, within the tolerance of this
	// one): on a busy machine the call itself may take longer than that.
	if r1.Requested.Before(before.Add(-inspectTol)) || r1.Requested.After(after.Add(inspectTol)) {
		e.t.Errorf("Requested %v, want within the call [%v, %v]", r1.Requested, before, after)
	}
	if d := r1.Until.Sub(r1.Requested); d != batontype.DefaultRunRequestTTL {
		e.t.Errorf("default TTL: Until-Requested %v, want %v", d, batontype.DefaultRunRequestTTL)
	}
	if d := r2.Until.Sub(r2.Requested); d != time.Hour {
		e.t.Errorf("TTL 1h: Until-Requested %v, want 1h", d)
	}
	st := e.controlState()
	var ids []string
	for i, r := range st.Requests {
		ids = append(ids, r.ID)
		if i > 0 && r.Requested.Before(st.Requests[i-1].Requested) {
			e.t.Errorf("pending requests not oldest first: %+v", st.Requests)
		}
	}
	if len(ids) != 2 || !slices.Contains(ids, r1.ID) || !slices.Contains(ids, r2.ID) {
		e.t.Fatalf("pending requests %q, want %q", ids, []string{r1.ID, r2.ID})
	}
	if st.Requests[0].ID != r1.ID {
		st.Requests[0], st.Requests[1] = st.Requests[1], st.Requests[0] // same millisecond
	}
	if got := st.Requests[0]; got.Job != job || got.RequestedBy != "operator" || !got.Requested.Equal(r1.Requested) || !got.Until.Equal(r1.Until) {
		e.t.Errorf("listed request %+v, want %+v", got, r1)
	}
	got, err := c.ClaimRun(e.ctx, r1.ID)
	if err != nil {
		e.t.Fatalf("ClaimRun: %v", err)
	}
	if got.ID != r1.ID || got.Job != job || got.RequestedBy != "operator" || !got.Requested.Equal(r1.Requested) {
		e.t.Errorf("ClaimRun returned %+v, want %+v", got, r1)
	}
	_, err = c.ClaimRun(e.ctx, r1.ID)
	e.wantErr(err, batontype.ErrNoRequest, "second ClaimRun of a request")
	_, err = c.ClaimRun(e.ctx, lockprovider.NewOwner())
	e.wantErr(err, batontype.ErrNoRequest, "ClaimRun of an unknown id")
	if st := e.controlState(); len(st.Requests) != 1 || st.Requests[0].ID != r2.ID {
		e.t.Errorf("pending after the claim: %+v, want only %s", st.Requests, r2.ID)
	}
}

// Of many concurrent claims of one request exactly one succeeds.
func testControlClaimOnce(e *env) {
	c := e.control()
	for range 3 {
		r, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name()})
		if err != nil {
			e.t.Fatalf("RequestRun: %v", err)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			won  int
			errs []error
		)
		for range 8 {
			wg.Go(func() {
				_, err := c.ClaimRun(e.ctx, r.ID)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case !errors.Is(err, batontype.ErrNoRequest):
					errs = append(errs, err)
				}
			})
		}
		wg.Wait()
		if won != 1 || len(errs) > 0 {
			e.t.Fatalf("8 concurrent claims: %d won, errors %v; want exactly 1 and no other error", won, errs)
		}
	}
}

// An expired request is neither listed nor claimable.
func testControlExpiry(e *env) {
	c := e.control()
	r, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name(), TTL: batontype.MinRunRequestTTL})
	if err != nil {
		e.t.Fatalf("RequestRun: %v", err)
	}
	keep, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name()})
	if err != nil {
		e.t.Fatalf("RequestRun: %v", err)
	}
	time.Sleep(batontype.MinRunRequestTTL + 100*time.Millisecond) // the documented TTL passes: expiry is what is checked
	st := e.controlState()
	if len(st.Requests) != 1 || st.Requests[0].ID != keep.ID {
		e.t.Errorf("pending after one request expired: %+v, want only %s", st.Requests, keep.ID)
	}
	_, err = c.ClaimRun(e.ctx, r.ID)
	e.wantErr(err, batontype.ErrNoRequest, "ClaimRun of an expired request")
}

// Watchers are signalled by pauses, resumes and requests, and no longer
// after stop.
func testControlWatch(e *env) {
	c := e.control()
	ch := make(chan struct{}, 1)
	stop, err := c.WatchControl(e.ctx, ch)
	if err != nil {
		e.t.Fatalf("WatchControl: %v", err)
	}
	defer stop()
	drain := func() {
		for {
			select {
			case <-ch:
			default:
				return
			}
		}
	}
	job := e.name()
	drain()
	e.setPaused(job, true)
	e.wantSignal(ch, "SetPaused true")
	drain()
	e.setPaused(job, false)
	e.wantSignal(ch, "SetPaused false")
	drain()
	if _, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: job}); err != nil {
		e.t.Fatalf("RequestRun: %v", err)
	}
	e.wantSignal(ch, "RequestRun")
	stop()
	stop()
	drain()
	e.setPaused(job, true)
	select {
	case <-ch:
		e.t.Error("signalled after stop")
	case <-time.After(100 * time.Millisecond):
	}
	_, err = c.WatchControl(e.ctx, nil)
	e.wantErr(err, batontype.ErrInvalid, "WatchControl with a nil channel")
}

func testControlValidation(e *env) {
	c := e.control()
	e.wantInvalid(c.SetPaused(e.ctx, "", true), batontype.ErrInvalidName, "Name", "SetPaused of an empty name")
	e.wantInvalid(c.SetPaused(e.ctx, strings.Repeat("x", batontype.MaxNameLen+1), true), batontype.ErrInvalidName, "Name", "SetPaused of a long name")
	_, err := c.RequestRun(e.ctx, batontype.RunRequest{Job: "a\x00b"})
	e.wantInvalid(err, batontype.ErrInvalidName, "Name", "RequestRun with a control character")
	_, err = c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name(), TTL: time.Millisecond})
	e.wantInvalid(err, batontype.ErrInvalidDuration, "TTL", "RequestRun with a 1ms TTL")
	_, err = c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name(), TTL: -time.Second})
	e.wantInvalid(err, batontype.ErrInvalidDuration, "TTL", "RequestRun with a negative TTL")
	_, err = c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name(), ID: "mine"})
	e.wantInvalid(err, batontype.ErrInvalid, "ID", "RequestRun with an ID")
	_, err = c.RequestRun(e.ctx, batontype.RunRequest{Job: e.name(), RequestedBy: "a\nb"})
	e.wantInvalid(err, batontype.ErrInvalid, "RequestedBy", "RequestRun with a control character in RequestedBy")
	_, err = c.ClaimRun(e.ctx, "")
	e.wantInvalid(err, batontype.ErrInvalid, "ID", "ClaimRun of an empty id")
	if st := e.controlState(); len(st.Paused) != 0 || len(st.Requests) != 0 {
		e.t.Errorf("rejected calls changed the state: %+v", st)
	}
}

// A done context fails every call without acting.
func testControlDone(e *env) {
	c := e.control()
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	job := e.name()
	if err := c.SetPaused(ctx, job, true); err == nil {
		e.t.Error("SetPaused with a cancelled context succeeded")
	}
	if _, err := c.RequestRun(ctx, batontype.RunRequest{Job: job}); err == nil {
		e.t.Error("RequestRun with a cancelled context succeeded")
	}
	if _, err := c.ControlState(ctx); err == nil {
		e.t.Error("ControlState with a cancelled context succeeded")
	}
	if st := e.controlState(); st.IsPaused(job) || len(st.Requests) != 0 {
		e.t.Errorf("calls with a cancelled context changed the state: %+v", st)
	}
}
