package history

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const msec = int64(time.Millisecond)

// acq is a definite acquire by owner over [call, ret] ms; granted at g ms
// with token tok for most ms when tok > 0, refused when tok is 0.
func acq(owner string, call, ret, g int64, tok int64, most, least int64) Op {
	o := Op{Kind: Acquire, Name: "n", Owner: owner, AtMostFor: time.Duration(most * msec), AtLeastFor: time.Duration(least * msec),
		Call: call * msec, Return: ret * msec, Result: NotAcquired}
	if tok > 0 {
		o.Result = OK
		o.Lease = Grant{Owner: owner, Token: tok, GrantedAt: g * msec, Until: (g + most) * msec}
		if least > 0 {
			o.Lease.AtLeastUntil = (g + least) * msec
		}
	}
	return o
}

func rel(owner string, call, ret int64, r Result) Op {
	return Op{Kind: Release, Name: "n", Owner: owner, Call: call * msec, Return: ret * msec, Result: r}
}

func ext(owner string, call, ret, p int64, tok, granted, most, least int64, r Result) Op {
	o := Op{Kind: Extend, Name: "n", Owner: owner, AtMostFor: time.Duration(most * msec), AtLeastFor: time.Duration(least * msec),
		Call: call * msec, Return: ret * msec, Result: r}
	if r == OK {
		o.Lease = Grant{Owner: owner, Token: tok, GrantedAt: granted * msec, Until: (p + most) * msec}
		if least > 0 {
			o.Lease.AtLeastUntil = (p + least) * msec
		}
	}
	return o
}

// look is a definite Inspect over [call, ret] ms that saw the name held
// with token tok, or free when tok is 0.
func look(call, ret, tok int64) Op {
	o := Op{Kind: Inspect, Name: "n", Call: call * msec, Return: ret * msec, Result: OK, Held: tok != 0}
	o.Lease.Token = tok
	return o
}

func unknown(o Op) Op { o.Result, o.Lease = Unknown, Grant{}; return o }

func TestModel(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
		ops  []Op
	}{
		{"grant then refusal while held", true, []Op{acq("a", 0, 1, 0, 1, 100, 0), acq("b", 10, 11, 0, 0, 100, 0)}},
		{"refusal of a free name", false, []Op{acq("b", 10, 11, 0, 0, 100, 0)}},
		{"grant while another lease is in force", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), acq("b", 50, 51, 50, 2, 100, 0)}},
		{"grant after expiry", true, []Op{acq("a", 0, 1, 0, 1, 100, 0), acq("b", 150, 151, 150, 2, 100, 0)}},
		{"refusal after expiry", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), acq("b", 150, 151, 0, 0, 100, 0)}},
		{"token not larger", false, []Op{acq("a", 0, 1, 0, 5, 100, 0), rel("a", 2, 3, OK), acq("b", 10, 11, 10, 5, 100, 0)}},
		{"holder's repeat gets the same grant", true, []Op{acq("a", 0, 1, 0, 1, 100, 0), acq("a", 5, 6, 0, 1, 100, 0)}},
		{"refusal explained by an acquire of unknown outcome", true, []Op{unknown(acq("a", 0, 5, 0, 1, 100, 0)), acq("b", 10, 11, 0, 0, 100, 0)}},
		{"refusal long after an unknown acquire's lease", false, []Op{unknown(acq("a", 0, 5, 0, 1, 100, 0)), acq("b", 300, 301, 0, 0, 100, 0)}},
		{"release by another owner", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), rel("b", 2, 3, OK)}},
		{"holder's release refused while held", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), rel("a", 2, 3, NotHeld)}},
		{"stale release refused", true, []Op{acq("a", 0, 1, 0, 1, 100, 0), rel("a", 2, 3, OK), rel("a", 4, 5, NotHeld)}},
		{"release inside the minimum hold keeps it held", false, []Op{acq("a", 0, 1, 0, 1, 100, 60), rel("a", 2, 3, OK), acq("b", 30, 31, 30, 2, 100, 0)}},
		{"grant after the minimum hold", true, []Op{acq("a", 0, 1, 0, 1, 100, 60), rel("a", 2, 3, OK), acq("b", 70, 71, 70, 2, 100, 0)}},
		{"extend of an expired lease", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), ext("a", 150, 151, 150, 1, 0, 100, 0, OK)}},
		{"extend keeps the token", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), ext("a", 50, 51, 50, 2, 0, 100, 0, OK)}},
		{"extend moves the minimum hold earlier", false, []Op{acq("a", 0, 1, 0, 1, 200, 100), ext("a", 50, 51, 50, 1, 0, 200, 30, OK)}},
		{"extend keeps the minimum hold", true, []Op{acq("a", 0, 1, 0, 1, 200, 100), ext("a", 50, 51, 50, 1, 0, 200, 50, OK)}},
		{"extend shortening the lease before the hold", true, []Op{acq("a", 0, 1, 0, 1, 200, 100), ext("a", 50, 51, 50, 1, 0, 20, 0, OK)}},
		{"inspect sees the holder's token", true, []Op{acq("a", 0, 1, 0, 1, 100, 0), look(10, 11, 1)}},
		{"inspect sees another token", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), look(10, 11, 2)}},
		{"inspect sees a lease held after its end", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), look(150, 151, 1)}},
		{"inspect sees a held name free", false, []Op{acq("a", 0, 1, 0, 1, 100, 0), look(10, 11, 0)}},
		{"inspect sees a released name free", true, []Op{acq("a", 0, 1, 0, 1, 100, 0), rel("a", 2, 3, OK), look(10, 11, 0)}},
		{"inspect sees the minimum hold", false, []Op{acq("a", 0, 1, 0, 1, 100, 60), rel("a", 2, 3, OK), look(10, 11, 0)}},
		{"inspect learns an unknown grant's token", false, []Op{unknown(acq("a", 0, 5, 0, 1, 100, 0)), look(10, 11, 7), acq("b", 20, 21, 20, 8, 100, 0)}},
		// Granted anywhere in [0, 40], released at once: its minimum hold
		// of 60 ends somewhere in [60, 100], so a refusal at 90 is right
		// and a refusal at 110 is not.
		{"minimum hold of an unknown grant", true, []Op{unknown(acq("a", 0, 40, 0, 1, 200, 60)), rel("a", 41, 42, OK), acq("b", 90, 91, 0, 0, 100, 0)}},
		{"minimum hold of an unknown grant ends", false, []Op{unknown(acq("a", 0, 40, 0, 1, 200, 60)), rel("a", 41, 42, OK), acq("b", 110, 111, 0, 0, 100, 0)}},
		{"grant reported before its call", false, []Op{acq("a", 100, 101, 50, 1, 100, 0)}},
		{"lease longer than asked", false, []Op{func() Op { o := acq("a", 0, 1, 0, 1, 100, 0); o.Lease.Until += 50 * msec; return o }()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, c.ok, Config{}, c.ops)
		})
	}
}

func check(t *testing.T, ok bool, cfg Config, ops []Op) {
	t.Helper()
	h := &History{baseWall: 1}
	for _, o := range ops {
		h.Add(o)
	}
	if r := Check(h, cfg); r.OK() != ok {
		t.Errorf("Check: OK %v, want %v: %s", r.OK(), ok, r)
	}
}

// A provider reporting the client's clock at the send as GrantedAt
// (Config.ClientGrantTime) granted somewhere in the call: after a read
// that saw the name free, though the reported time is before it.
func TestClientGrantTime(t *testing.T) {
	ops := []Op{
		acq("a", 0, 1, 0, 1, 100, 0),
		ext("a", 60, 80, 60, 1, 0, 40, 0, OK), // ends at 100
		acq("b", 50, 130, 50, 2, 100, 0),      // sent at 50, granted after 100
		look(110, 120, 0),
	}
	check(t, true, Config{ClientGrantTime: true}, ops)
	check(t, false, Config{}, ops)
	// Still a violation: a grant while the lease was in force throughout.
	check(t, false, Config{ClientGrantTime: true}, []Op{acq("a", 0, 1, 0, 1, 100, 0), acq("b", 50, 60, 50, 2, 100, 0)})
	// An extension sent at 60 to end at 70, applied by the backend after
	// an inspect at 80 still found the old lease (seen on etcd behind a
	// delaying proxy); afterwards the name is free.
	late := []Op{
		acq("a", 0, 1, 0, 1, 100, 0),
		ext("a", 60, 150, 60, 1, 0, 10, 0, OK),
		look(80, 85, 1),
		look(160, 165, 0),
	}
	check(t, true, Config{ClientGrantTime: true}, late)
	check(t, false, Config{}, late)
	// Still a violation: an extension sent after the lease had ended.
	check(t, false, Config{ClientGrantTime: true}, []Op{acq("a", 0, 1, 0, 1, 100, 0), ext("a", 110, 150, 110, 1, 0, 10, 0, OK)})
}

func TestWindowsAndWrites(t *testing.T) {
	h := &History{baseWall: 1}
	h.windows = []Window{
		{Name: "n", Owner: "a", Token: 1, From: 0, Until: 100},
		{Name: "n", Owner: "a", Token: 1, From: 50, Until: 150}, // the same grant, extended
		{Name: "n", Owner: "b", Token: 2, From: 140, Until: 200},
	}
	h.writes = []Write{
		{Resource: "r", Token: 2, Accepted: true, Call: 0, Return: 10},
		{Resource: "r", Token: 1, Accepted: false, Call: 20, Return: 30},
		{Resource: "r", Token: 1, Accepted: true, Call: 40, Return: 50},
	}
	r := Check(h, Config{})
	if len(r.Violations) != 2 {
		t.Fatalf("violations %q, want an overlap and a stale write", r.Violations)
	}
	if !strings.Contains(r.String(), "overlap") || !strings.Contains(r.String(), "accepted token 1") {
		t.Errorf("report %s", r)
	}
	// A force-release frees a grant whose holder learns of it late: its
	// window, even one that began after the force-release, is not
	// compared with the next holder's.
	f := &History{baseWall: 1}
	f.Add(acq("a", 0, 1, 0, 1, 100, 0))
	f.Add(Op{Kind: ForceRelease, Name: "n", Call: 2 * msec, Return: 3 * msec, Result: OK, Lease: Grant{Owner: "a", Token: 1, GrantedAt: 0, Until: 100 * msec}})
	f.Add(acq("b", 4, 5, 4, 2, 100, 0))
	f.windows = []Window{
		{Name: "n", Owner: "a", Token: 1, From: 20 * msec, Until: 90 * msec},
		{Name: "n", Owner: "b", Token: 2, From: 5 * msec, Until: 100 * msec},
	}
	if r := Check(f, Config{}); !r.OK() {
		t.Errorf("window of a force-released grant: %s", r)
	}
	h.windows[2].From = 150
	h.writes = h.writes[:2]
	if r := Check(h, Config{}); !r.OK() {
		t.Errorf("adjacent windows and a refused stale write: %s", r)
	}
	if r := Check(h, Config{Permits: 2}); !r.OK() {
		t.Errorf("two permits: %s", r)
	}
}

// A history survives Save and Load, and Merge aligns two processes' clocks.
func TestSaveLoadMerge(t *testing.T) {
	a, b := New(), New()
	a.Add(acq("x", 0, 1, 0, 1, 100, 0))
	b.Add(acq("y", 10, 11, 0, 0, 100, 0))
	var buf strings.Builder
	if err := b.Save(&buf); err != nil {
		t.Fatal(err)
	}
	b2, err := Load(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(a, b2)
	if m.Len() != 2 {
		t.Fatalf("merged %d ops", m.Len())
	}
	ops := m.Ops()
	if ops[1].Process != 2 || ops[1].Call < ops[0].Call {
		t.Errorf("merged ops %+v", ops)
	}
}

// An acquire of unknown outcome whose request a stalled network held may
// be granted long after its call, up to Config.Delivery after its caller
// gave up; outside that bound, and for definite operations, the model
// keeps its teeth.
func TestModelLateDelivery(t *testing.T) {
	late := Config{Delivery: 3 * time.Second}
	cases := []modelCase{
		{"refusal during a late phantom lease", late, true, []Op{unknown(acq("a", 0, 5, 0, 1, 100, 0)), acq("b", 1000, 1001, 0, 0, 100, 0)}},
		{"the same without a delivery bound", Config{}, false, []Op{unknown(acq("a", 0, 5, 0, 1, 100, 0)), acq("b", 1000, 1001, 0, 0, 100, 0)}},
		{"late grant after the name freed", late, true, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), unknown(acq("b", 10, 20, 0, 2, 100, 0)), acq("c", 250, 251, 0, 0, 100, 0), acq("c", 400, 401, 400, 3, 100, 0)}},
		{"refusal past the delivery bound", late, false, []Op{unknown(acq("a", 0, 5, 0, 1, 100, 0)), acq("b", 3200, 3201, 0, 0, 100, 0)}},
		{"overlapping grants stay a violation", late, false, []Op{
			unknown(acq("x", 0, 5, 0, 1, 100, 0)), acq("a", 10, 11, 10, 2, 100, 0), acq("b", 50, 51, 50, 3, 100, 0)}},
		{"refusal of a free name stays a violation", late, false, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), unknown(rel("a", 2, 3, OK)), acq("b", 500, 501, 0, 0, 100, 0)}},
		{"client-time grant delivered after later operations", Config{ClientGrantTime: true}, true, []Op{
			acq("a", 500, 1000, 500, 1, 150, 0), acq("b", 0, 1000, 0, 2, 150, 0), acq("c", 10, 1000, 10, 3, 150, 0)}},
		{"client-time grant sent before its call", Config{ClientGrantTime: true}, false, []Op{acq("a", 100, 1000, 0, 1, 150, 0)}},
		// A Redlock run under load: the SETs reached the masters up to the
		// reply, 50 ms after the send, and the holder's release 15 ms past
		// the reported Until still found the keys.
		{"client-time lease released past its Until, inside the reply plus its length", Config{ClientGrantTime: true}, true, []Op{
			acq("a", 0, 50, 0, 1, 150, 0), rel("a", 165, 168, OK)}},
		{"the same release past the reply plus the length", Config{ClientGrantTime: true}, false, []Op{
			acq("a", 0, 50, 0, 1, 150, 0), rel("a", 210, 212, OK)}},
		{"the same release on a backend-clock provider", Config{}, false, []Op{
			acq("a", 0, 50, 0, 1, 150, 0), rel("a", 165, 168, OK)}},
		{"late extension delivered while live", late, true, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), unknown(ext("a", 10, 20, 10, 1, 0, 100, 0, OK)), acq("b", 150, 151, 0, 0, 100, 0)}},
	}
	checkCases(t, cases)
}

// With RowLocks a refusal is explained by another owner's write of the
// name in flight at the time, which holds its row locked: an acquire, and
// also a release or an extension (a ShedLock PostgreSQL history under load
// had a release in flight for 150 ms while a contender was refused after
// the lease had ended). A refusal with no such write, or by the
// requester's own write, is still a violation.
func TestModelRowLocks(t *testing.T) {
	rows := Config{RowLocks: true}
	checkCases(t, []modelCase{
		{"refused behind a release in flight", rows, true, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), rel("a", 50, 260, OK), acq("b", 200, 201, 0, 0, 100, 0)}},
		{"refused behind an extension in flight", rows, true, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), ext("a", 90, 260, 90, 1, 0, 10, 0, NotHeld), acq("b", 200, 201, 0, 0, 100, 0)}},
		{"refused with no write in flight", rows, false, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), rel("a", 50, 60, OK), acq("b", 200, 201, 0, 0, 100, 0)}},
		{"the same without RowLocks", Config{}, false, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), rel("a", 50, 260, OK), acq("b", 200, 201, 0, 0, 100, 0)}},
	})
}

// A client that resends after a network error (go-redis): the first send
// of a's extension acted, an operator force-released the lease it made
// last, and the resend found the name free.
func TestModelResends(t *testing.T) {
	resends := Config{Resends: true}
	force := Op{Kind: ForceRelease, Name: "n", Call: 250 * msec, Return: 251 * msec, Result: OK,
		Lease: Grant{Owner: "a", Token: 1, GrantedAt: 0, Until: 100 * msec}}
	extendThenForced := []Op{acq("a", 0, 1, 0, 1, 100, 0), ext("a", 10, 270, 0, 0, 0, 600, 0, NotHeld), force}
	releasedThenResent := []Op{acq("a", 0, 1, 0, 1, 100, 0), rel("a", 10, 30, NotHeld), acq("b", 40, 41, 40, 2, 100, 0)}
	checkCases(t, []modelCase{
		{"extension acted before a force-release, its resend refused", resends, true, extendThenForced},
		{"the same without resends", Config{}, false, extendThenForced},
		{"release acted, its resend refused", resends, true, releasedThenResent},
		{"the same without resends", Config{}, false, releasedThenResent},
		{"a refused extension of a lease in force throughout", resends, false, []Op{
			acq("a", 0, 1, 0, 1, 100, 0), ext("a", 10, 20, 0, 0, 0, 100, 0, NotHeld), acq("b", 50, 51, 50, 2, 100, 0)}},
	})
}

// modelCase is a history and whether the checker must accept it.
type modelCase struct {
	name string
	cfg  Config
	ok   bool
	ops  []Op
}

func checkCases(t *testing.T, cases []modelCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &History{baseWall: 1}
			for _, o := range c.ops {
				h.Add(o)
			}
			if r := Check(h, c.cfg); r.OK() != c.ok {
				t.Errorf("Check: OK %v, want %v: %s", r.OK(), c.ok, r)
			}
		})
	}
}
