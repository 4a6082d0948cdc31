package history

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Config sets the checker's tolerances. The zero Config is usable.
type Config struct {
	// Skew bounds the difference between the backend's clock and the local
	// one, plus the backend's rounding of times. Zero means 5ms, for a
	// backend on the same machine.
	Skew time.Duration
	// Linger is how long after its end a lease may still make the backend
	// refuse others: zero for a backend that expires leases at their Until
	// (memory, Redis, SQL); etcd, whose own leases end up to a second
	// later, needs about that.
	Linger time.Duration
	// SplitVotes also explains a refusal by another owner's acquire of the
	// name in flight at the time or within a lease length before it: on a
	// quorum of independent servers (Redlock) contenders can split the
	// votes so that none wins, and a failed acquire's partial grants may
	// linger until they expire.
	SplitVotes bool
	// RowLocks also explains a refusal by another owner's write of the
	// name (an acquire, extension, release or force-release) in flight at
	// the same time: a SQL provider's write holds the name's row locked
	// until it commits, and a claim that finds the row locked is refused
	// rather than queued behind it (NOWAIT), so for that moment others are
	// refused while a read still finds the name free. Unlike SplitVotes, a claim that has returned explains
	// nothing after its return. For the same reason a grant or an
	// extension is seen from its commit, some instant between the time the
	// backend reports (its statement's clock) and the reply, as with
	// ClientGrantTime.
	RowLocks bool
	// ClientGrantTime is set for a provider whose Lease.GrantedAt (and so
	// Until) is the client's clock at the send rather than the backend's
	// instant of the grant (etcd, Redlock): the grant is then taken to have
	// happened at some instant between GrantedAt and the reply, and the
	// backend, which counts the lease from the request's arrival, to hold
	// it for the holder's release or extension up to the reply plus its
	// length (the trusted windows still end by the reported Until).
	ClientGrantTime bool
	// Resends is set for a client that sends a request again after a
	// network error (go-redis, Options.MaxRetries): an Extend or Release
	// answered not-held may then have acted on an earlier send, the lease
	// having ended (force-released, or released by that earlier send)
	// before the later one arrived.
	Resends bool
	// TickAfterGrant also explains the refusal of a tick as stale when the
	// name was granted at or after the tick's time, as the ShedLock modes
	// may refuse it (their Java replicas record no tick, so a grant's time
	// stands in for one).
	TickAfterGrant bool
	// Delivery bounds how long after its caller gave up an operation of
	// unknown outcome may still reach the backend and take effect: a
	// request held by a stalled network (a fault proxy's blackhole or
	// delay) can be granted seconds after its call. Zero means it took
	// effect by the time its call returned, as with no network faults. An
	// operation of unknown outcome is ordered before every operation
	// called after this bound (plus Skew), which also keeps the search
	// short on long histories.
	Delivery time.Duration
	// Permits is how many trusted windows of one name may overlap: 1 for a
	// lock (zero means 1).
	Permits int
	// Timeout bounds the linearizability search per history. Zero means one
	// minute. A search that does not finish is reported as inconclusive,
	// which fails Verify.
	Timeout time.Duration
	// Seed, when set, is printed with every failure so the run can be
	// replayed.
	Seed int64
	// Dir is where Verify writes the picture of a failing history. Empty
	// means $BATON_HISTORY_DIR, or the system's temporary directory.
	Dir string
}

func (c Config) bounds() bounds {
	b := bounds{skew: int64(c.Skew), linger: int64(c.Linger), tickGrant: c.TickAfterGrant, deferred: c.ClientGrantTime || c.RowLocks, client: c.ClientGrantTime, resends: c.Resends, delivery: int64(c.Delivery)}
	if b.skew <= 0 {
		b.skew = int64(5 * time.Millisecond)
	}
	return b
}

// Report is the verdict on a history.
type Report struct {
	Ops, Windows, Writes, Rates int // what was checked
	Unknown                     int // operations of unknown outcome among Ops

	// Violations says what is wrong, one line each; empty for a history
	// that could have come from correct leases.
	Violations []string
	// Inconclusive is set when the linearizability search timed out.
	Inconclusive bool
	// Failing is a short sub-history of one name that no lease explains
	// (nil when linearizable); Stuck says where the search for an order
	// stopped: the states the longest order found leads to, and the
	// operations none of which can come next.
	Failing []Op
	Stuck   string

	info  porcupine.LinearizationInfo
	model porcupine.Model
	notes []string
}

// OK reports whether the history passed every check.
func (r *Report) OK() bool { return len(r.Violations) == 0 && !r.Inconclusive }

// Err returns nil for a history that passed, else an error listing the
// violations.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	return fmt.Errorf("history: %s", r.String())
}

// String summarises the report.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d operations (%d of unknown outcome), %d trusted windows, %d fenced writes, %d rate decisions checked", r.Ops, r.Unknown, r.Windows, r.Writes, r.Rates)
	if r.Inconclusive {
		b.WriteString("; linearizability search timed out (inconclusive)")
	}
	for _, v := range r.Violations {
		b.WriteString("\n  violation: " + v)
	}
	if len(r.Failing) > 0 {
		fmt.Fprintf(&b, "\n  shortest failing sub-history of %q (%d operations; times on the history's clock):", r.Failing[0].Name, len(r.Failing))
		from := 0
		if len(r.Failing) > 60 {
			from = len(r.Failing) - 40
		}
		if from > 0 {
			fmt.Fprintf(&b, "\n    … %d earlier operations", from)
		}
		for _, o := range r.Failing[from:] {
			ret := ms(o.Return)
			if o.Result == Unknown {
				ret = "?"
			}
			fmt.Fprintf(&b, "\n    [%s, %s] %s", ms(o.Call), ret, describe(&o))
		}
	}
	if r.Stuck != "" {
		b.WriteString("\n  " + strings.ReplaceAll(r.Stuck, "\n", "\n  "))
	}
	for _, n := range r.notes {
		b.WriteString("\n  note: " + n)
	}
	return b.String()
}

// Check verifies h: every name's operations are linearizable against the
// lease model, tokens strictly increase across grants (part of the model),
// no more than cfg.Permits trusted windows of a name overlap, no fenced
// resource accepted a write whose token is lower than one it had accepted
// before, and every rate-limit key's admissions stay within its
// algorithm's bound (see RateViolation).
func Check(h *History, cfg Config) *Report {
	h.mu.Lock()
	ops := slices.Clone(h.ops)
	windows := slices.Clone(h.windows)
	writes := slices.Clone(h.writes)
	rates := slices.Clone(h.rates)
	notes := slices.Clone(h.notes)
	h.mu.Unlock()
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	b := cfg.bounds()
	r := &Report{Ops: len(ops), Windows: len(windows), Writes: len(writes), Rates: len(rates), model: model(b), notes: notes}
	for _, o := range ops {
		if o.Result == Unknown {
			r.Unknown++
		}
	}
	if cfg.SplitVotes || cfg.RowLocks {
		markContended(ops, cfg.SplitVotes)
	}
	windows = truncateForced(windows, ops)
	res, info := porcupine.CheckOperationsVerbose(r.model, operations(b, ops), cfg.Timeout)
	r.info = info
	switch res {
	case porcupine.Illegal:
		// Refuting an order is an exhaustive search; the report's extras
		// get a budget of their own so a failure is reported in seconds.
		end := time.Now().Add(min(cfg.Timeout, explainBudget))
		r.Failing = shortest(b, r.model, ops, end)
		r.Stuck = stuck(b, r.model, r.Failing, end)
		name := ""
		if len(r.Failing) > 0 {
			name = r.Failing[0].Name
		}
		r.Violations = append(r.Violations, fmt.Sprintf("the operations on %q are not linearizable against the lease model", name))
	case porcupine.Unknown:
		r.Inconclusive = true
	}
	r.Violations = append(r.Violations, overlaps(windows, max(cfg.Permits, 1))...)
	r.Violations = append(r.Violations, staleWrites(writes)...)
	r.Violations = append(r.Violations, rateViolations(rates)...)
	if cfg.Seed != 0 && !r.OK() {
		r.notes = append(r.notes, fmt.Sprintf("seed %d (replay with SEED=%d)", cfg.Seed, cfg.Seed))
	}
	return r
}

// markContended marks the refused acquires that another owner's write of
// the name may explain. With linger (Config.SplitVotes) that is an acquire
// in flight at the time or returned within a lease length before: its
// partial grants on some servers. Otherwise (Config.RowLocks) it is any
// write in flight at the time, an acquire, extension, release or
// force-release, which holds the name's row locked while it runs.
func markContended(ops []Op, linger bool) {
	for i := range ops {
		o := &ops[i]
		if o.Kind != Acquire || o.Result != NotAcquired {
			continue
		}
		for j := range ops {
			q := &ops[j]
			after := q.Return
			if linger {
				after += int64(q.AtMostFor)
			}
			writes := q.Kind == Acquire || !linger && q.Kind != Inspect
			if writes && q.Name == o.Name && q.Owner != o.Owner && q.Call <= o.Return &&
				(q.Result == Unknown || after >= o.Call) {
				o.contended = true
				break
			}
		}
	}
}

// truncateForced ends each trusted window at the force-release that freed
// its grant: an operator's force-release ends exclusion by design (the
// holder learns of it at its next extension or the end of its window, and
// fencing stops its writes), so windows are compared only up to it.
func truncateForced(ws []Window, ops []Op) []Window {
	out := slices.Clone(ws)
	for _, o := range ops {
		if o.Kind != ForceRelease || (o.Result != OK && o.Result != Unknown) {
			continue
		}
		for i := range out {
			w := &out[i]
			// A window of the freed grant that begins after the
			// force-release (its acquire's reply came late) is no more
			// exclusive than one that began before it.
			if w.Name != o.Name || o.Result == OK && w.Token != o.Lease.Token {
				continue
			}
			if o.Result == Unknown && o.Cond != 0 && w.Token != o.Cond {
				continue
			}
			if w.Until > o.Call {
				w.Until = max(w.From, o.Call)
			}
		}
	}
	return out
}

// operations turns ops into porcupine's form: an operation of unknown
// outcome may take effect at any time after its call, so it returns after
// everything else.
func operations(b bounds, ops []Op) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(ops))
	for i := range ops {
		o := &ops[i]
		ret := o.Return
		if o.Result == Unknown {
			// It took effect, if at all, by the latest instant it can
			// have been delivered at: ordering it before everything
			// called later keeps the search from trying it after each
			// of them.
			ret = b.latest(o) + 1
		}
		out = append(out, porcupine.Operation{ClientId: o.Process*1000 + o.Client, Input: o, Call: o.Call, Output: o, Return: ret})
	}
	return out
}

// explainBudget bounds the search for the shortest failing sub-history
// and for where the order got stuck.
const explainBudget = 10 * time.Second

// shortest returns a short failing sub-history of one name: the
// operations answered by some instant T, with those still in flight at T
// taken as of unknown outcome. Every operation invoked after T follows all
// of them, so if the whole history were linearizable, so would this be:
// the earliest such T gives the shortest sub-history that shows the
// violation.
//
// Each search ends by end; one that does not finish counts as not
// illegal, so what is returned was always found illegal.
func shortest(b bounds, m porcupine.Model, ops []Op, end time.Time) []Op {
	illegal := func(ops []Op) bool {
		left := time.Until(end)
		return left > 0 && porcupine.CheckOperationsTimeout(m, operations(b, ops), left) == porcupine.Illegal
	}
	by := map[string][]Op{}
	for _, o := range ops {
		by[o.Name] = append(by[o.Name], o)
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		part := by[n]
		slices.SortStableFunc(part, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
		if !illegal(part) {
			continue
		}
		var cuts []int64
		for _, o := range part {
			if o.Result != Unknown {
				cuts = append(cuts, o.Return)
			}
		}
		slices.Sort(cuts)
		cut := func(t int64) []Op {
			var sub []Op
			for _, o := range part {
				switch {
				case o.Call > t:
				case o.Result != Unknown && o.Return <= t:
					sub = append(sub, o)
				default:
					o.Result, o.Err = Unknown, "in flight at the cut"
					sub = append(sub, o)
				}
			}
			return sub
		}
		lo, hi := 0, len(cuts)-1
		if len(cuts) == 0 || !illegal(cut(cuts[hi])) {
			return part
		}
		for lo < hi {
			mid := (lo + hi) / 2
			if illegal(cut(cuts[mid])) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return cut(cuts[hi])
	}
	return nil
}

// stuck describes where the search for an order of ops (not
// linearizable) stopped.
func stuck(b bounds, m porcupine.Model, ops []Op, end time.Time) string {
	if len(ops) == 0 || time.Until(end) <= 0 {
		return ""
	}
	_, info := porcupine.CheckOperationsVerbose(m, operations(b, ops), time.Until(end))
	var best []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(best) {
				best = lin
			}
		}
	}
	states := []state{{tick: noTick}}
	done := map[*Op]bool{}
	for _, o := range best {
		op := o.Input.(*Op)
		done[op] = true
		var next []state
		for _, s := range states {
			next = append(next, step(b, s, op)...)
		}
		states = next
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "the longest order found places %d of %d operations", len(best), len(ops))
	if len(best) > 0 {
		fmt.Fprintf(&sb, ", the last %s", describe(best[len(best)-1].Input.(*Op)))
	}
	sb.WriteString("; it leaves the name")
	for i, s := range states {
		if i == 4 {
			fmt.Fprintf(&sb, "\n    … %d more", len(states)-i)
			break
		}
		sb.WriteString("\n    " + describeState(s))
	}
	// The operations that could come next: not placed, invoked before
	// the first of them returned.
	first := int64(math.MaxInt64)
	for i := range ops {
		if o := &ops[i]; !done[o] && o.Result != Unknown {
			first = min(first, o.Return)
		}
	}
	sb.WriteString("\n  and none of these can come next:")
	n := 0
	for i := range ops {
		if o := &ops[i]; !done[o] && o.Call <= first && n < 6 {
			n++
			fmt.Fprintf(&sb, "\n    [%s, %s] %s", ms(o.Call), ms(o.Return), describe(o))
		}
	}
	return sb.String()
}

// overlaps reports instants at which more than permits trusted windows of
// different grants of one name were open.
func overlaps(ws []Window, permits int) []string {
	by := map[string][]Window{}
	for _, w := range ws {
		if w.Until > w.From {
			by[w.Name] = append(by[w.Name], w)
		}
	}
	var out []string
	for name, list := range by {
		slices.SortFunc(list, func(a, b Window) int { return cmp.Compare(a.From, b.From) })
		// open holds the windows that have begun and not yet ended, one
		// per grant (a grant's windows may overlap each other).
		var open []Window
		for _, w := range list {
			open = slices.DeleteFunc(open, func(o Window) bool { return o.Until <= w.From })
			grants := map[string]Window{}
			for _, o := range open {
				grants[grantKey(o)] = o
			}
			grants[grantKey(w)] = w
			if len(grants) > permits {
				var lines []string
				for _, o := range grants {
					lines = append(lines, fmt.Sprintf("%s token %d [%s, %s]", who(o), o.Token, ms(o.From), ms(o.Until)))
				}
				slices.Sort(lines)
				out = append(out, fmt.Sprintf("%d trusted windows of %q overlap at %s (at most %d may): %s",
					len(grants), name, ms(w.From), permits, strings.Join(lines, "; ")))
				if len(out) >= 5 {
					return out
				}
			}
			open = append(open, w)
		}
	}
	slices.Sort(out)
	return out
}

func grantKey(w Window) string { return fmt.Sprintf("%s/%d", w.Owner, w.Token) }

func who(w Window) string {
	if w.Proc != 0 {
		return fmt.Sprintf("p%d/c%d %s", w.Proc, w.Client, short(w.Owner))
	}
	return fmt.Sprintf("c%d %s", w.Client, short(w.Owner))
}

// staleWrites reports accepted writes whose token is lower than that of a
// write the same resource had accepted before they were invoked.
func staleWrites(ws []Write) []string {
	by := map[string][]Write{}
	for _, w := range ws {
		if w.Accepted {
			by[w.Resource] = append(by[w.Resource], w)
		}
	}
	var out []string
	for res, list := range by {
		byRet := slices.Clone(list)
		slices.SortFunc(byRet, func(a, b Write) int { return cmp.Compare(a.Return, b.Return) })
		slices.SortFunc(list, func(a, b Write) int { return cmp.Compare(a.Call, b.Call) })
		// best is the highest token among writes answered before the
		// current write's call.
		var best Write
		j := 0
		for _, w := range list {
			for j < len(byRet) && byRet[j].Return < w.Call {
				if byRet[j].Token > best.Token {
					best = byRet[j]
				}
				j++
			}
			if w.Token < best.Token {
				out = append(out, fmt.Sprintf("resource %q accepted token %d at %s after it had accepted token %d at %s",
					res, w.Token, ms(w.Call), best.Token, ms(best.Return)))
				if len(out) >= 5 {
					return out
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Verify checks h and fails t with the report when it finds a violation;
// it then writes porcupine's picture of the history (an HTML file) and
// names it in the failure. It returns the report.
func Verify(t testing.TB, h *History, cfg Config) *Report {
	t.Helper()
	r := Check(h, cfg)
	if r.OK() {
		t.Logf("history: %s", r.String())
		return r
	}
	msg := r.String()
	if path, err := r.picture(cfg.Dir, t.Name()); err == nil {
		msg += "\n  picture: " + path
	} else {
		msg += "\n  (no picture: " + err.Error() + ")"
	}
	if path, err := save(h, cfg.Dir, t.Name()); err == nil {
		msg += "\n  history: " + path + " (history.Load reads it back, to check it again)"
	} else {
		msg += "\n  (history not saved: " + err.Error() + ")"
	}
	t.Error(msg)
	return r
}

// save writes h as JSON beside the picture.
func save(h *History, dir, name string) (string, error) {
	f, err := create(dir, name, ".json")
	if err != nil {
		return "", err
	}
	if err := h.Save(f); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return filepath.Abs(f.Name())
}

// create makes a new file for a failing history's record in dir (see
// Config.Dir), named after the test.
func create(dir, name, ext string) (*os.File, error) {
	if dir == "" {
		dir = os.Getenv("BATON_HISTORY_DIR")
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	clean := strings.Map(func(c rune) rune {
		if c == '/' || c == ' ' || c == '\\' {
			return '_'
		}
		return c
	}, name)
	return os.CreateTemp(dir, "history-"+clean+"-*"+ext)
}

// picture writes the visualization of the checked history.
func (r *Report) picture(dir, name string) (string, error) {
	f, err := create(dir, name, ".html")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := porcupine.Visualize(r.model, r.info, &buf); err != nil {
		f.Close()
		return "", err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return "", err
	}
	return filepath.Abs(f.Name())
}
