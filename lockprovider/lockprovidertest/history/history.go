package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Kind is the operation an Op records.
type Kind uint8

// The operations of the lease model.
const (
	Acquire Kind = iota + 1
	Extend
	Release
	ForceRelease
	Inspect
)

func (k Kind) String() string {
	switch k {
	case Acquire:
		return "acquire"
	case Extend:
		return "extend"
	case Release:
		return "release"
	case ForceRelease:
		return "force-release"
	case Inspect:
		return "inspect"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Result is how an operation ended, as far as its caller can know.
type Result uint8

// The results of an operation. Unknown means the operation may or may not
// have taken effect (a timeout, a dropped connection, a lost reply).
const (
	OK Result = iota + 1
	NotAcquired
	NotHeld
	StaleTick
	Unknown
)

func (r Result) String() string {
	switch r {
	case OK:
		return "ok"
	case NotAcquired:
		return "not-acquired"
	case NotHeld:
		return "not-held"
	case StaleTick:
		return "stale-tick"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Result(%d)", r)
}

// Op is one recorded operation on one lock name. Times are nanoseconds on
// the history's clock: monotonic within a process, anchored to the wall
// clock at the history's start so that histories of several processes on
// one machine merge (see Merge). Server times (the lease's GrantedAt,
// Until and AtLeastUntil) are converted to the same axis through the wall
// clock, which is the backend's clock on one machine.
type Op struct {
	Client int    `json:"c"`
	Kind   Kind   `json:"k"`
	Name   string `json:"n"`
	Owner  string `json:"o,omitempty"`
	// AtMostFor and AtLeastFor are the requested durations (Acquire, Extend).
	AtMostFor  time.Duration `json:"most,omitempty"`
	AtLeastFor time.Duration `json:"least,omitempty"`
	Tick       int64         `json:"tick,omitempty"` // Acquire's tick on the history's axis; 0 for none
	Cond       int64         `json:"cond,omitempty"` // ForceRelease's token condition; 0 for none
	Call       int64         `json:"call"`           // invocation
	Return     int64         `json:"ret"`            // response (for Unknown: when the caller gave up)
	Result     Result        `json:"r"`              //
	Err        string        `json:"err,omitempty"`  // the error text of an Unknown result
	Lease      Grant         `json:"lease,omitzero"` // Acquire and Extend with OK; ForceRelease's freed lease; Inspect's lease when Held
	Held       bool          `json:"held,omitempty"` // Inspect: a lease was in force
	Process    int           `json:"proc,omitempty"` // set by Merge
	Comment    string        `json:"note,omitempty"` // free text for the picture
	index      int           // position in the history, for reports
	contended  bool          // see Config.SplitVotes and RowLocks
}

// Grant is a lease as the provider reported it, on the history's axis.
type Grant struct {
	Owner        string `json:"o,omitempty"`
	Token        int64  `json:"t"`
	GrantedAt    int64  `json:"g"`
	Until        int64  `json:"u"`
	AtLeastUntil int64  `json:"l,omitempty"` // 0 when the lease has no minimum hold
}

// Window is a trusted window: the interval (history axis) in which a holder
// acted as the owner of Name with Token. Windows of different grants of
// one name must not overlap (for a semaphore, at most N may).
type Window struct {
	Client int    `json:"c"`
	Name   string `json:"n"`
	Owner  string `json:"o"`
	Token  int64  `json:"t"`
	From   int64  `json:"f"`
	Until  int64  `json:"u"`
	Proc   int    `json:"proc,omitempty"`
}

// Write is one verdict of a fenced resource: a write with Token that the
// resource accepted or refused as stale, invoked at Call and answered at
// Return.
type Write struct {
	Client   int    `json:"c"`
	Resource string `json:"res"`
	Token    int64  `json:"t"`
	Accepted bool   `json:"a"`
	Call     int64  `json:"call"`
	Return   int64  `json:"ret"`
	Proc     int    `json:"proc,omitempty"`
}

// History records operations, trusted windows and fenced writes. Its
// methods are safe for concurrent use. The zero History is not usable;
// call New.
type History struct {
	base     time.Time // monotonic anchor
	baseWall int64     // base on the wall clock, Unix ns

	mu      sync.Mutex
	ops     []Op
	windows []Window
	writes  []Write
	rates   []Decision
	notes   []string
}

// New returns an empty History whose clock starts now.
func New() *History {
	now := time.Now()
	return &History{base: now, baseWall: now.UnixNano()}
}

// Now returns the current time on the history's axis.
func (h *History) Now() int64 { return int64(time.Since(h.base)) }

// At converts a local time (with a monotonic reading, as time.Now returns)
// to the history's axis.
func (h *History) At(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return int64(t.Sub(h.base))
}

// server converts a backend time (wall clock) to the history's axis.
func (h *History) server(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano() - h.baseWall
}

// grant converts a provider's lease.
func (h *History) grant(l batontype.Lease) Grant {
	g := Grant{Owner: l.Owner, Token: l.Token, GrantedAt: h.server(l.GrantedAt), Until: h.server(l.Until)}
	if l.AtLeastUntil.After(l.GrantedAt) {
		g.AtLeastUntil = h.server(l.AtLeastUntil)
	}
	return g
}

// Add records op as it is (its times on the history's axis).
func (h *History) Add(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	op.index = len(h.ops)
	h.ops = append(h.ops, op)
}

// Window records that a holder acted as the owner of name with token from
// from until until (local times).
func (h *History) Window(client int, name, owner string, token int64, from, until time.Time) {
	if !until.After(from) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.windows = append(h.windows, Window{Client: client, Name: name, Owner: owner, Token: token, From: h.At(from), Until: h.At(until)})
}

// Fenced records one verdict of a fenced resource: a write with token,
// invoked at call and answered at ret (local times), accepted or refused as
// stale. Writes that failed for other reasons are not verdicts and are not
// recorded.
func (h *History) Fenced(client int, resource string, token int64, accepted bool, call, ret time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writes = append(h.writes, Write{Client: client, Resource: resource, Token: token, Accepted: accepted, Call: h.At(call), Return: h.At(ret)})
}

// Note adds a line to the history's description (a seed, a fault), shown
// in reports.
func (h *History) Note(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, fmt.Sprintf(format, args...))
}

// Ops returns a copy of the recorded operations.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// Len returns the number of recorded operations.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

type saved struct {
	BaseWall int64      `json:"base"`
	Ops      []Op       `json:"ops"`
	Windows  []Window   `json:"windows,omitempty"`
	Writes   []Write    `json:"writes,omitempty"`
	Rates    []Decision `json:"rates,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

// Save writes h as JSON, for Load in another process.
func (h *History) Save(w io.Writer) error {
	h.mu.Lock()
	s := saved{BaseWall: h.baseWall, Ops: h.ops, Windows: h.windows, Writes: h.writes, Rates: h.rates, Notes: h.notes}
	err := json.NewEncoder(w).Encode(&s)
	h.mu.Unlock()
	return err
}

// Load reads a history written by Save.
func Load(r io.Reader) (*History, error) {
	var s saved
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("history: load: %w", err)
	}
	if s.BaseWall == 0 {
		return nil, errors.New("history: load: no base time")
	}
	h := &History{baseWall: s.BaseWall, ops: s.Ops, windows: s.Windows, writes: s.Writes, rates: s.Rates, notes: s.Notes}
	for i := range h.ops {
		h.ops[i].index = i
	}
	return h, nil
}

// Merge returns one history of the histories of several processes of one
// machine: their times are moved onto the earliest one's axis through the
// wall clock, and each record's Process is its history's position in hs
// (plus one). Clients keep their numbers within their process.
func Merge(hs ...*History) *History {
	out := &History{}
	for _, h := range hs {
		if out.baseWall == 0 || h.baseWall < out.baseWall {
			out.baseWall = h.baseWall
			out.base = h.base
		}
	}
	for i, h := range hs {
		h.mu.Lock()
		shift := h.baseWall - out.baseWall
		for _, op := range h.ops {
			op.Call += shift
			op.Return += shift
			if op.Tick != 0 {
				op.Tick += shift
			}
			if op.Lease.Token != 0 || op.Lease.GrantedAt != 0 {
				op.Lease.GrantedAt += shift
				op.Lease.Until += shift
				if op.Lease.AtLeastUntil != 0 {
					op.Lease.AtLeastUntil += shift
				}
			}
			op.Process = i + 1
			op.index = len(out.ops)
			out.ops = append(out.ops, op)
		}
		for _, w := range h.windows {
			w.From += shift
			w.Until += shift
			w.Proc = i + 1
			out.windows = append(out.windows, w)
		}
		for _, w := range h.writes {
			w.Call += shift
			w.Return += shift
			w.Proc = i + 1
			out.writes = append(out.writes, w)
		}
		for _, d := range h.rates {
			d.Proc = i + 1
			out.rates = append(out.rates, d)
		}
		for _, n := range h.notes {
			out.notes = append(out.notes, fmt.Sprintf("process %d: %s", i+1, n))
		}
		h.mu.Unlock()
	}
	return out
}
