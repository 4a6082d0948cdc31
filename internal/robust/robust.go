// Package robust is the seeded robustness run behind `make test-robust`:
// a randomized lock workload (lockprovidertest.Workload) on a backend
// reached through fault proxies, with a schedule of faults drawn from the
// seed (delays, blackholes, resets, dropped replies, server kills and
// restarts, a worker process stopped past its leases), and the whole
// history checked by the history package. The same SEED draws the same
// schedule; the interleaving is the machine's.
//
// The run is gated by ROBUST_TESTS=1 so that `make test` leaves it out;
// ROBUST_SECONDS sets its length per backend.
package robust

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Enabled skips t unless ROBUST_TESTS=1: the run is long and meant for
// `make test-robust`, not `make test`.
func Enabled(t *testing.T) {
	t.Helper()
	if os.Getenv("ROBUST_TESTS") != "1" {
		t.Skip("robustness run: set ROBUST_TESTS=1 (make test-robust)")
	}
}

// Seed returns $SEED, or a random seed when it is unset.
func Seed(t testing.TB) int64 {
	t.Helper()
	s := os.Getenv("SEED")
	if s == "" {
		return rand.Int64N(1<<53) + 1
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("SEED=%q: want a non-zero integer", s)
	}
	return n
}

// Duration returns $ROBUST_SECONDS (default 8) as the length of one
// backend's run.
func Duration(t testing.TB) time.Duration {
	t.Helper()
	s := os.Getenv("ROBUST_SECONDS")
	if s == "" {
		return 8 * time.Second
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		t.Fatalf("ROBUST_SECONDS=%q: want a positive number", s)
	}
	return time.Duration(n * float64(time.Second))
}

// Kind is a kind of fault.
type Kind int

// The faults of a schedule.
const (
	Delay       Kind = iota // every chunk through one proxy waits Fault.Delay
	Blackhole               // one proxy holds all traffic, then delivers it
	DropReplies             // one proxy lets requests through and drops replies
	Reset                   // one proxy resets its connections (and new ones) for a while
	Restart                 // one server is killed, then restarted
	Stop                    // one worker process is stopped (SIGSTOP), then resumed
)

func (k Kind) String() string {
	return [...]string{"delay", "blackhole", "drop-replies", "reset", "restart", "stop"}[k]
}

// Fault is one entry of a schedule: Kind on Target (a proxy, server or
// process index) from At for For.
type Fault struct {
	At, For time.Duration
	Kind    Kind
	Target  int
	Delay   time.Duration // for Delay
}

func (f Fault) String() string {
	s := fmt.Sprintf("%v %s #%d for %v", f.At.Round(time.Millisecond), f.Kind, f.Target, f.For.Round(time.Millisecond))
	if f.Kind == Delay {
		s += fmt.Sprintf(" (%v a chunk)", f.Delay)
	}
	return s
}

// MaxFault is the longest a fault lasts, network or process: a request
// held by one reaches the backend at most this long after it was sent.
const MaxFault = 1500 * time.Millisecond

// Plan draws the fault schedule of a run of length d on backend name from
// seed: faults on proxies proxies, servers servers (kill and restart) and
// procs worker processes (stop past a lease). The same arguments give the
// same schedule. Faults do not overlap, and the last ends a second before
// d so the run's end sees the network healed.
func Plan(seed int64, name string, d time.Duration, proxies, servers, procs int) []Fault {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Millisecond }
	if proxies == 0 && servers == 0 && procs == 0 {
		return nil
	}
	var out []Fault
	at := ms(200, 600)
	for {
		var f Fault
		switch r := rng.IntN(100); {
		case servers > 0 && r < 12:
			f = Fault{Kind: Restart, Target: rng.IntN(servers), For: ms(200, 800)}
		case procs > 0 && r < 24:
			f = Fault{Kind: Stop, Target: rng.IntN(procs), For: ms(700, int(MaxFault/time.Millisecond))}
		case proxies == 0:
			continue
		case r < 45:
			f = Fault{Kind: Delay, Target: rng.IntN(proxies), For: ms(300, 1200), Delay: ms(5, 120)}
		case r < 70:
			f = Fault{Kind: Blackhole, Target: rng.IntN(proxies), For: ms(200, int(MaxFault/time.Millisecond))}
		case r < 88:
			f = Fault{Kind: DropReplies, Target: rng.IntN(proxies), For: ms(100, 900)}
		default:
			f = Fault{Kind: Reset, Target: rng.IntN(proxies), For: ms(50, 400)}
		}
		f.At = at
		if f.At+f.For > d-time.Second {
			return out
		}
		out = append(out, f)
		at = f.At + f.For + ms(150, 700)
	}
}

// summary counts a schedule's faults by kind.
func summary(plan []Fault) string {
	n := map[Kind]int{}
	for _, f := range plan {
		n[f.Kind]++
	}
	var parts []string
	for k := Delay; k <= Stop; k++ {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
