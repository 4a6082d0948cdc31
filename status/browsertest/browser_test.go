package browsertest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/status"
	"github.com/baton-go/baton/status/internal/synth"
)

var (
	views = flag.String("views", "", "also write a screenshot of every view into this directory, for review")
)

func TestMain(m *testing.M) { testenv.Main(m) }

// browser starts headless Chromium, with extra options if any, and
// returns a tab's context. Console errors and uncaught exceptions (a
// Content-Security-Policy violation among them) fail the test.
func browser(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := os.Getenv("BATON_CHROMIUM")
	if path == "" {
		var err error
		if path, err = exec.LookPath("chromium"); err != nil {
			t.Fatal("the browser test needs Chromium: apt-get install -y chromium (or set BATON_CHROMIUM to a Chrome binary)")
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 5*time.Minute)
	messages := chromedp.Console(ctx)
	var (
		mu       sync.Mutex
		problems []string
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			// A refused action is an HTTP error the test asks for, which
			// the browser logs from its network source.
			if m.IsException() || (m.Type == "error" && m.Source != "network") {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
		<-done
		for _, p := range problems {
			t.Errorf("browser console: %s", p)
		}
	})
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	return ctx
}

func do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func get[T any](t testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// click clicks sel, again when the page redrew the node between its
// lookup and the click: the refresh replaces table rows (an armed button
// is drawn again, armed), and a user's click lands on whatever is there.
func click(sel string) chromedp.Action[chromedp.Void] {
	return redrawn(chromedp.Click(chromedp.CSS(sel)))
}

// redrawn runs a node action again, up to 5 times in all, when the page
// replaced the node between the action's lookup and its use: a refresh
// redraws tables and notices every Config.Refresh, and on a busy machine
// the two steps can straddle one.
func redrawn[T any](a chromedp.Action[T]) chromedp.Action[T] {
	return func(ctx context.Context, tg *chromedp.Target) (T, error) {
		var v T
		var err error
		for range 5 {
			if v, err = a(ctx, tg); err == nil || !strings.Contains(err.Error(), "node with given id") {
				return v, err
			}
		}
		return v, err
	}
}

func loaded(view string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(`body[data-loaded="` + view + `"]`))
}

// open navigates to url and waits until the view named in its fragment
// has rendered.
func open(t testing.TB, ctx context.Context, url, view string) {
	t.Helper()
	do(t, ctx, chromedp.Navigate(url), loaded(view))
}

// show switches the open page to a view and waits until it has rendered.
func show(t *testing.T, ctx context.Context, view string) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#`+view+`"`), loaded(view))
}

type domRun struct {
	Job, Lane, Replica, Outcome string
	Token                       string
	Error                       string
	Cls                         string
}

type timelineSnap struct {
	From, To, Now string
	Runs          []domRun
	Missed        []struct{ Job, Tick string }
}

const snapJS = `(() => {
  const svg = document.getElementById("timeline");
  return { From: svg.dataset.from, To: svg.dataset.to, Now: svg.dataset.now,
    Runs: [...svg.querySelectorAll("g.lane rect.run")].map((r) => ({
      Job: r.dataset.job, Lane: r.parentNode.dataset.replica, Replica: r.dataset.replica,
      Outcome: r.dataset.outcome, Token: r.dataset.token, Error: r.dataset.error, Cls: r.getAttribute("class") })),
    Missed: [...svg.querySelectorAll("g.ticks rect.missed")].map((r) => ({ Job: r.dataset.job, Tick: r.dataset.tick })) };
})()`

func ms(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMilli(n)
}

// TestBrowser drives the status page through its views in Chromium, on
// three scheduler instances in Redis (a succeeding, a failing and a
// panicking job, ledger on) with a lock and rate-limit state in
// PostgreSQL.
func TestBrowser(t *testing.T) {
	bctx := browser(t)
	ctx := t.Context()

	rp, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pgprovider.New(pgenv.Schema(t).Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	jobs := []struct {
		name  string
		every time.Duration
		fn    scheduler.Func
		opts  []scheduler.LockOption
	}{
		{"daily-report", 2 * time.Second, func(ctx context.Context, run scheduler.Run) error {
			time.Sleep(time.Duration(400+run.Tick.UnixMilli()/1000%5*100) * time.Millisecond) // the job's work
			return nil
		}, nil},
		{"customer-sync", 3 * time.Second, func(ctx context.Context, run scheduler.Run) error {
			time.Sleep(300 * time.Millisecond) // the job's work
			return errors.New("upstream said 503")
		}, nil},
		{"thumbnails", 4 * time.Second, func(ctx context.Context, run scheduler.Run) error {
			time.Sleep(150 * time.Millisecond) // the job's work
			panic("thumbnail decoder: nil image")
		}, nil},
		{"heartbeat", time.Second, func(ctx context.Context, run scheduler.Run) error {
			time.Sleep(100 * time.Millisecond) // the job's work
			return nil
		}, nil},
		// Held at least 3s, ticking every 2s: every other tick finds the
		// lock still held and no replica runs it (a missed tick).
		{"ledger-export", 2 * time.Second, func(ctx context.Context, run scheduler.Run) error {
			time.Sleep(200 * time.Millisecond) // the job's work
			return nil
		}, []scheduler.LockOption{scheduler.AtLeastFor(3 * time.Second)}},
		// Its tick of the minute before start ran nowhere: one replica
		// catches it up at start.
		{"cache-warmup", time.Minute, func(ctx context.Context, run scheduler.Run) error {
			time.Sleep(time.Second) // the job's work
			return nil
		}, []scheduler.LockOption{scheduler.CatchUp()}},
	}
	// cache-warmup's catch-up at start holds its lock for 1.5s (its run and
	// the at-least bound): started just before a minute, it would make
	// every replica skip that minute's tick, and the Jobs view would
	// rightly report a missed tick. Start clear of the boundary.
	if next := time.Now().Truncate(time.Minute).Add(time.Minute); time.Until(next) < 3*time.Second {
		time.Sleep(time.Until(next) + 100*time.Millisecond) // start clear of the minute boundary
	}
	for i := range 3 {
		s, err := scheduler.New(rp, &scheduler.Config{LockedBy: "replica-" + strconv.Itoa(i+1), Ledger: true, RegistryTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			opts := append([]scheduler.LockOption{scheduler.AtMostFor(time.Minute), scheduler.AtLeastFor(500 * time.Millisecond)}, j.opts...)
			if _, err := s.Every(j.every).Locked(j.name, opts...).Do(j.fn); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		})
	}
	started := time.Now()

	// State in PostgreSQL: a held lock and rate-limit keys over, near and
	// well within their limit.
	limit := batontype.RateLimit{Algorithm: batontype.TokenBucket, Rate: 100, Period: time.Hour}
	hold := func() batontype.Lease {
		l, err := pp.Acquire(ctx, lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: 2 * time.Minute, LockedBy: "billing-7"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	lease := hold()
	for key, n := range map[string]int64{"api:alice": 100, "api:bob": 95, "api:carol": 10} {
		if _, err := pp.RateLimit(ctx, lockprovider.RateRequest{Key: key, N: n, Limits: []batontype.RateLimit{limit}}); err != nil {
			t.Fatal(err)
		}
	}

	backends := []status.Backend{{Name: "redis", Provider: rp}, {Name: "postgres", Provider: pp}}
	cfg := status.Config{Backends: backends, Grace: 2 * time.Second, Refresh: time.Second,
		Limits: func(string) []batontype.RateLimit { return []batontype.RateLimit{limit} }}
	rw := cfg
	rw.Actions = true
	pageRW, err := status.New(&rw)
	if err != nil {
		t.Fatal(err)
	}
	pageRO, err := status.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/baton/", pageRW)
	mux.Handle("/ro/", http.StripPrefix("/ro", pageRO))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// Let every job run a few times on the three replicas.
	time.Sleep(time.Until(started.Add(12 * time.Second)))

	// Timeline: each run in the lane of the replica that ran it, coloured
	// by its outcome.
	open(t, bctx, srv.URL+"/ops/baton/#timeline?range=25000", "timeline")
	do(t, bctx, click("#tl-live")) // stop following now, so the drawing holds still
	// Let the drawing settle after live following stops.
	time.Sleep(1500 * time.Millisecond)
	snap := get(t, bctx, chromedp.Evaluate[timelineSnap](snapJS))
	from, now := ms(snap.From), ms(snap.Now)
	byToken := map[string]domRun{}
	lanes, outcomes := map[string]bool{}, map[string]int{}
	for _, r := range snap.Runs {
		if r.Lane != r.Replica {
			t.Errorf("run %s of %s drawn in lane %s, its replica is %s", r.Token, r.Job, r.Lane, r.Replica)
		}
		byToken[r.Job+"/"+r.Token] = r
		lanes[r.Lane] = true
		outcomes[r.Outcome]++
	}
	checked, catchUps := 0, 0
	claimed, missed := map[string]bool{}, map[string]int{}
	for _, j := range jobs {
		recs, err := rp.Runs(ctx, batontype.RunQuery{Job: j.name, Since: from, Until: now})
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			d, ok := byToken[j.name+"/"+strconv.FormatInt(rec.Token, 10)]
			switch {
			case !ok && rec.Started.Before(now.Add(-time.Second)):
				t.Errorf("%s: run with token %d (started %v on %s) is not on the timeline", j.name, rec.Token, rec.Started, rec.LockedBy)
			case !ok:
			case d.Lane != rec.LockedBy:
				t.Errorf("%s token %d: in lane %s, ran on %s", j.name, rec.Token, d.Lane, rec.LockedBy)
			case d.Outcome != "running" && d.Outcome != rec.Outcome.String():
				t.Errorf("%s token %d: drawn as %s, the ledger says %s", j.name, rec.Token, d.Outcome, rec.Outcome)
			case d.Outcome == "running" && !rec.Finished.IsZero() && rec.Finished.Before(now.Add(-time.Second)):
				t.Errorf("%s token %d: drawn as running, finished at %v", j.name, rec.Token, rec.Finished)
			case rec.CatchUp != strings.Contains(d.Cls, "catch-up"):
				t.Errorf("%s token %d: class %q, catch-up %v in the ledger", j.name, rec.Token, d.Cls, rec.CatchUp)
			default:
				checked++
				if rec.CatchUp {
					catchUps++
				}
			}
			claimed[j.name+"/"+strconv.FormatInt(rec.Tick.UnixMilli(), 10)] = true
		}
	}
	// A missed-tick marker only where the ledger has no run of the tick.
	for _, m := range snap.Missed {
		if claimed[m.Job+"/"+m.Tick] {
			t.Errorf("%s: tick %s marked missed, the ledger has a run of it", m.Job, m.Tick)
		}
		missed[m.Job]++
	}
	if missed["ledger-export"] == 0 || catchUps != 1 {
		t.Errorf("timeline: missed ticks %v, want some of ledger-export; %d catch-up runs, want 1", missed, catchUps)
	}
	if checked < 15 || len(lanes) < 2 || outcomes["failed"] == 0 || outcomes["panicked"] == 0 || outcomes["succeeded"] == 0 {
		t.Errorf("timeline: %d runs checked, lanes %v, outcomes %v: want at least 15 runs in 2 lanes with each outcome", checked, lanes, outcomes)
	}

	// Hovering a failed run shows its token, duration and error.
	box := get(t, bctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector("rect.run.o-failed"); r.scrollIntoView({block: "center"}); const c = r.getBoundingClientRect(); return [c.x + c.width / 2, c.y + c.height / 2, Number(r.dataset.token)]; })()`))
	do(t, bctx, chromedp.MouseEvent(chromedp.MouseMoved, box[0], box[1]))
	detail := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS("#tl-detail"))))
	if !strings.Contains(detail, "failed") || !strings.Contains(detail, "token    "+strconv.FormatInt(int64(box[2]), 10)) ||
		!strings.Contains(detail, "duration ") || !strings.Contains(detail, "upstream said 503") {
		t.Errorf("detail pane after hovering a failed run: %q", detail)
	}
	do(t, bctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	savePNG(t, get(t, bctx, chromedp.CaptureScreenshot()))

	// Jobs: every job with its live replicas; the failing and panicking
	// ones marked.
	show(t, bctx, "jobs")
	viewShot(t, bctx, "jobs")
	// A job whose latest run is still going is running, not failed, so
	// the rows are read between runs of the two failing jobs (they run
	// for 300 ms every 3 s and 150 ms every 4 s; the page refreshes every
	// second).
	type jobRow struct{ Job, Problem, Replicas, Cls, State string }
	var rows []jobRow
	for deadline := time.Now().Add(30 * time.Second); ; {
		rows = get(t, bctx, chromedp.Evaluate[[]jobRow](`[...document.querySelectorAll("#jobs-table tbody tr")].map((r) => ({Job: r.dataset.job, Problem: r.dataset.problem, Replicas: r.children[6].textContent, Cls: r.className, State: r.dataset.state}))`))
		if !slices.ContainsFunc(rows, func(r jobRow) bool {
			return r.State == "running" && (r.Job == "customer-sync" || r.Job == "thumbnails")
		}) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	want := map[string]string{"daily-report": "", "customer-sync": "failed", "thumbnails": "failed", "heartbeat": "", "ledger-export": "", "cache-warmup": ""}
	for _, r := range rows {
		p, ok := want[r.Job]
		if r.Job == "ledger-export" && r.Problem == "missed" { // every other tick
			p = "missed"
		}
		if !ok || r.Replicas != "3/3" || r.Problem != p || (p != "") != (r.Cls == "problem") {
			t.Errorf("jobs row %+v", r)
		}
		delete(want, r.Job)
	}
	if len(want) > 0 {
		t.Errorf("jobs view lacks %v", want)
	}

	// Rate limits: the key over its limit first, then the one near it.
	show(t, bctx, "limits")
	viewShot(t, bctx, "limits")
	keys := get(t, bctx, chromedp.Evaluate[[]struct{ Key, State string }](`[...document.querySelectorAll("#limits-table tbody tr")].map((r) => ({Key: r.dataset.key, State: r.dataset.state}))`))
	if got := fmt.Sprint(keys); got != "[{api:alice over} {api:bob near} {api:carol ok}]" {
		t.Errorf("limits view: %s", got)
	}
	// While carol's reset is armed, carol going over the limit does not
	// move the rows (over ranks first): the button stays under the
	// pointer for the confirm click.
	carol := `tr[data-key="api:carol"] button`
	do(t, bctx, click(carol))
	if _, err := pp.RateLimit(ctx, lockprovider.RateRequest{Key: "api:carol", N: 90, Limits: []batontype.RateLimit{limit}}); err != nil {
		t.Fatal(err)
	}
	get(t, bctx, chromedp.Poll[bool](`document.querySelector('tr[data-key="api:carol"]')?.dataset.state === "over"`, chromedp.WithPollingTimeout(30*time.Second)))
	armedRows := get(t, bctx, chromedp.Evaluate[struct{ Keys, Button string }](`({Keys: [...document.querySelectorAll("#limits-table tbody tr")].map((r) => r.dataset.key).join(","),
		Button: document.querySelector('tr[data-key="api:carol"] button').textContent})`))
	if armedRows.Keys != "api:alice,api:bob,api:carol" || !strings.HasPrefix(armedRows.Button, "confirm") {
		t.Errorf("while carol's reset is armed: rows %s, its button %q; want the order kept and the button armed", armedRows.Keys, armedRows.Button)
	}
	do(t, bctx, click(carol)) // the reset gives carol its capacity back: the key is gone
	get(t, bctx, chromedp.Poll[bool](`(document.querySelector('tr[data-key="api:carol"]')?.dataset.state ?? "ok") === "ok"`, chromedp.WithPollingTimeout(30*time.Second)))

	// Locks: the holder with its token and a time left that counts down;
	// force-release (two clicks) frees the lock in PostgreSQL.
	show(t, bctx, "locks")
	viewShot(t, bctx, "locks")
	sel := `tr[data-lock="payments"][data-backend="postgres"]`
	tok := get(t, bctx, redrawn(chromedp.AttributeValue(chromedp.CSS(sel), "data-token"))).Value
	// The page redraws countdowns every 250 ms, but a busy machine delays
	// the browser's timers: wait for the first text (the row is drawn
	// before its countdown), then the next second's, each up to a bound
	// far past the redraw period.
	countdown := func() string { return get(t, bctx, redrawn(chromedp.Text(chromedp.CSS(sel+" td.countdown")))) }
	left1 := countdown()
	for end := time.Now().Add(15 * time.Second); left1 == "" && time.Now().Before(end); {
		time.Sleep(250 * time.Millisecond) // poll interval of a deadline-bounded wait
		left1 = countdown()
	}
	left2 := left1
	for end := time.Now().Add(15 * time.Second); left2 == left1 && time.Now().Before(end); {
		time.Sleep(250 * time.Millisecond) // poll interval of a deadline-bounded wait
		left2 = countdown()
	}
	if tok != strconv.FormatInt(lease.Token, 10) || left1 == left2 || left1 == "" {
		t.Errorf("locks row: token %s (want %d), time left %q then %q", tok, lease.Token, left1, left2)
	}
	do(t, bctx, click(sel+" button"), click(sel+" button"))
	// The notice of this release (an earlier one, the limit's reset, may
	// still be shown for a moment).
	get(t, bctx, chromedp.Poll[bool](`(document.querySelector("#notice-text")?.textContent || "").startsWith("force-release ")`, chromedp.WithPollingTimeout(30*time.Second)))
	notice := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS("#notice-text"))))
	if info, err := pp.Inspect(ctx, "payments"); err != nil || info.Held {
		t.Fatalf("after force-release in the page (%q) the backend says %+v %v", notice, info, err)
	}
	// The notice names the holder and says what it does next.
	if !strings.Contains(notice, "billing-7") || !strings.Contains(notice, "token "+tok) || !strings.Contains(notice, "until its trust window ends") {
		t.Errorf("force-release notice %q: want the holder, its token and what it does next", notice)
	}

	// Read-only page: no button, and a POST from the page is refused.
	lease = hold()
	open(t, bctx, srv.URL+"/ro/#locks", "locks")
	buttons := get(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#locks-table button").length`))
	refused := get(t, bctx, chromedp.Evaluate[struct {
		Status int
		Error  string
	}](fmt.Sprintf(`fetch("api/actions/force-release", {method: "POST", headers: {"Content-Type": "application/json"},
			body: JSON.stringify({backend: "postgres", name: "payments", token: %d})}).then(async (r) => ({Status: r.status, Error: (await r.json()).error}))`, lease.Token),
		chromedp.EvalAwaitPromise))
	if buttons != 0 || refused.Status != http.StatusForbidden || !strings.Contains(refused.Error, "disabled") {
		t.Errorf("read-only page: %d buttons, POST answered %+v", buttons, refused)
	}

	// Another site's form cannot act, even with actions on.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="POST" enctype="text/plain" action="%s/ops/baton/api/actions/force-release">`+
			`<input name='{"backend":"postgres","name":"payments","x":"' value='"}'></form><script>document.forms[0].submit()</script>`, srv.URL)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	do(t, bctx, chromedp.Navigate(evilURL), chromedp.Sleep(time.Second), chromedp.WaitReady(chromedp.CSS("body")))
	body := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS("body"))))
	if info, err := pp.Inspect(ctx, "payments"); err != nil || !info.Held || info.Token != lease.Token {
		t.Errorf("after another site's form post (%q) the backend says %+v %v", body, info, err)
	}
	if !strings.Contains(body, "cross-origin request refused") {
		t.Errorf("another site's form post was answered %q", body)
	}
}

// TestBrowserBuckets draws a day of one-minute ticks: more runs than
// buckets, so the timeline shows segments; hovering one shows its counts,
// and clicking it zooms in to single runs.
func TestBrowserBuckets(t *testing.T) {
	bctx := browser(t)
	p, err := synth.Week(2, time.Minute, 24*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	open(t, bctx, srv.URL+"/#timeline?range=86400000", "timeline")
	segs := get(t, bctx, chromedp.Evaluate[[]struct{ Job, Mode, Outcome string }](`[...document.querySelectorAll("#timeline g.lane rect.seg")].map((r) => ({Job: r.dataset.job, Mode: r.closest("g.job").dataset.mode, Outcome: r.dataset.outcome}))`))
	outcomes := map[string]int{}
	for _, sg := range segs {
		if sg.Mode != "buckets" {
			t.Errorf("segment %+v in a job drawn in mode %s", sg, sg.Mode)
		}
		outcomes[sg.Outcome]++
	}
	if outcomes["succeeded"] == 0 || outcomes["failed"] == 0 {
		t.Fatalf("a day of runs drawn as %d segments %v, want succeeded and failed ones", len(segs), outcomes)
	}
	box := get(t, bctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector("rect.seg.o-failed"); r.scrollIntoView({block: "center"}); const c = r.getBoundingClientRect(); return [c.x + c.width / 2, c.y + c.height / 2]; })()`))
	do(t, bctx, chromedp.MouseEvent(chromedp.MouseMoved, box[0], box[1]))
	if detail := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS("#tl-detail")))); !strings.Contains(detail, "failed") || !strings.Contains(detail, "click to zoom in") {
		t.Errorf("detail of a failed segment: %q", detail)
	}
	do(t, bctx, chromedp.MouseClickXY(box[0], box[1]))
	get(t, bctx, chromedp.Poll[bool](`[...document.querySelectorAll("#timeline g.job")].every((g) => g.dataset.mode === "runs") && document.querySelectorAll("#timeline rect.run.o-failed").length > 0`, chromedp.WithPollingTimeout(20*time.Second)))
	if live := get(t, bctx, chromedp.Evaluate[bool](`document.getElementById("tl-live").checked`)); live {
		t.Error("zooming in left the timeline following now")
	}
}

func savePNG(t *testing.T, png []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(t.TempDir(), "status-timeline.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func viewShot(t *testing.T, ctx context.Context, view string) {
	t.Helper()
	if *views != "" {
		if err := os.WriteFile(filepath.Join(*views, view+".png"), get(t, ctx, chromedp.CaptureScreenshot()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
