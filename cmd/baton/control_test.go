package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	myprovider "github.com/baton-go/baton/lockprovider/mysql"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
)

// jobs run, pause and resume against three scheduler instances: a run
// request runs exactly once, on a replica, without disturbing the
// scheduled ticks; a pause stops the job on every replica within one
// tick, a resume restarts it, and jobs ls shows the pause.
func TestCLIControl(t *testing.T) {
	t.Parallel()
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		prefix := testenv.Prefix(t)
		client := redisenv.Client(t)
		cliControl(t, []string{"--redis", testenv.RedisURL(t), "--redis-prefix", prefix}, func() lockprovider.Provider {
			return must(redisprovider.New(client, &redisprovider.Config{Prefix: prefix}))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pg := pgenv.Schema(t)
		p := must(pgprovider.New(pg.Pool, nil))
		if err := p.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		cliControl(t, []string{"--postgres", pg.URL}, func() lockprovider.Provider { return must(pgprovider.New(pg.Pool, nil)) })
	})
	t.Run("mysql", func(t *testing.T) {
		t.Parallel()
		my, args := mysqlMigrated(t)
		cliControl(t, args, func() lockprovider.Provider { return must(myprovider.New(my.DB, nil)) })
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

type cliRun struct {
	replica string
	run     scheduler.Run
	at      time.Time
}

func cliControl(t *testing.T, args []string, newProvider func() lockprovider.Provider) {
	const iv = 300 * time.Millisecond
	var (
		mu   sync.Mutex
		runs []cliRun
	)
	get := func() []cliRun {
		mu.Lock()
		defer mu.Unlock()
		return append([]cliRun(nil), runs...)
	}
	count := func(manual bool, since time.Time) int {
		n := 0
		for _, r := range get() {
			if r.run.Manual == manual && r.at.After(since) {
				n++
			}
		}
		return n
	}
	var paused sync.Map // replica -> ErrPaused skips
	p0 := newProvider()
	for i := range 3 {
		name := fmt.Sprintf("replica-%d", i)
		s, err := scheduler.New(newProvider(), &scheduler.Config{LockedBy: name, Ledger: true, RegistryTTL: 2 * time.Second,
			Observer: scheduler.Hooks{Skipped: func(ev scheduler.Event) {
				if errors.Is(ev.Err, scheduler.ErrPaused) {
					paused.Store(name, true)
				}
			}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		_, err = s.Every(iv).Locked("job", scheduler.AtMostFor(5*time.Second)).Do(func(ctx context.Context, run scheduler.Run) error {
			mu.Lock()
			defer mu.Unlock()
			for _, r := range runs {
				if !run.Manual && r.run.Tick.Equal(run.Tick) {
					t.Errorf("tick %v ran twice", run.Tick)
				}
			}
			runs = append(runs, cliRun{name, run, time.Now()})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Every(time.Hour).Locked("broken", scheduler.AtMostFor(5*time.Second)).Do(func(ctx context.Context, run scheduler.Run) error {
			return errors.New("disk full")
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	// The registry lists the job once the instances published it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(wantCode(t, 0, "", append([]string{"jobs", "ls"}, args...)...), "job") {
		if time.Now().After(deadline) {
			t.Fatal("job not in the registry")
		}
		time.Sleep(50 * time.Millisecond) // poll interval of a deadline-bounded wait
	}

	// jobs run: exactly one manual run per request.
	start := time.Now()
	for i := range 3 {
		out := wantCode(t, 0, "", append([]string{"jobs", "run", "job", "--wait", "-o", "json"}, args...)...)
		var reqs []struct {
			Job     string               `json:"job"`
			ID      string               `json:"id"`
			Claimed bool                 `json:"claimed"`
			Run     *batontype.RunRecord `json:"run"`
		}
		if err := json.Unmarshal([]byte(out), &reqs); err != nil || len(reqs) != 1 || !reqs[0].Claimed || reqs[0].ID == "" {
			t.Fatalf("jobs run output %q (%v): want one claimed request", out, err)
		}
		// --wait follows the claim to the run's outcome.
		if r := reqs[0].Run; r == nil || !r.Manual || r.Outcome != batontype.OutcomeSucceeded {
			t.Errorf("jobs run --wait: run %+v, want the manual run, succeeded", r)
		}
		deadline := time.Now().Add(10 * time.Second)
		for count(true, start) < i+1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
		}
	}
	time.Sleep(2 * iv) // a window in which a fourth manual run would show
	if n := count(true, start); n != 3 {
		t.Errorf("%d manual runs for 3 jobs run requests", n)
	}
	led := p0.(lockprovider.Ledger)
	recs, err := led.Runs(t.Context(), batontype.RunQuery{Job: "job", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	manual := 0
	for _, r := range recs {
		if r.Manual {
			manual++
			if !r.Tick.IsZero() || r.Outcome != batontype.OutcomeSucceeded {
				t.Errorf("manual run record %+v: want no tick, succeeded", r)
			}
		}
	}
	if manual != 3 {
		t.Errorf("ledger holds %d manual runs, want 3", manual)
	}
	if n := count(false, start); n < int(time.Since(start)/iv)-2 {
		t.Errorf("%d scheduled runs in %v at one per %v: the requests disturbed the ticks", n, time.Since(start), iv)
	}
	// A run that fails: --wait exits 1 and says how it ended.
	if out := wantCode(t, 1, "", append([]string{"jobs", "run", "broken", "--wait"}, args...)...); !strings.Contains(out, "failed on replica-") || !strings.Contains(out, "disk full") {
		t.Errorf("jobs run broken --wait:\n%s", out)
	}
	wantCode(t, 3, "", append([]string{"jobs", "run", "no-such-job"}, args...)...)
	if _, errs, code := baton(t, "", append([]string{"jobs", "run", "a\x01b"}, args...)...); code != 2 || strings.Count(errs, "baton: ") != 1 {
		t.Errorf("jobs run of an invalid name: exit %d, stderr %q; want 2 and one \"baton: \" prefix", code, errs)
	}
	wantCode(t, 2, "", append([]string{"jobs", "run"}, args...)...)
	// A pause of a name nothing knows still sets the flag, with a warning.
	if _, errs, code := baton(t, "", append([]string{"jobs", "pause", "no-such-job"}, args...)...); code != 0 || !strings.Contains(errs, "warning") {
		t.Errorf("jobs pause of an unknown job: exit %d, stderr %q; want 0 and a warning", code, errs)
	}
	// Resuming it clears the flag, quietly; resuming it again (or a
	// misspelt name) warns that nothing was paused.
	if _, errs, code := baton(t, "", append([]string{"jobs", "resume", "no-such-job"}, args...)...); code != 0 || strings.Contains(errs, "warning") {
		t.Errorf("jobs resume of a paused name: exit %d, stderr %q; want 0 and no warning", code, errs)
	}
	if _, errs, code := baton(t, "", append([]string{"jobs", "resume", "no-such-job"}, args...)...); code != 0 || !strings.Contains(errs, "not paused") {
		t.Errorf("jobs resume of a name not paused: exit %d, stderr %q; want 0 and a warning", code, errs)
	}
	if _, errs, _ := baton(t, "", append([]string{"jobs", "pause", "job"}, args...)...); strings.Contains(errs, "warning") {
		t.Errorf("jobs pause of a registered job warned: %q", errs)
	}
	wantCode(t, 0, "", append([]string{"jobs", "resume", "job"}, args...)...)

	// jobs pause: no replica runs the job from one tick after the command.
	wantCode(t, 0, "", append([]string{"jobs", "pause", "job"}, args...)...)
	time.Sleep(iv) // a pause takes effect from the next tick
	from := time.Now()
	time.Sleep(4 * iv) // a window in which a paused run would show
	if n := count(false, from); n != 0 {
		t.Errorf("%d scheduled runs while paused", n)
	}
	for i := range 3 {
		if _, ok := paused.Load(fmt.Sprintf("replica-%d", i)); !ok {
			t.Errorf("replica-%d reported no ErrPaused skip", i)
		}
	}
	type lsJob struct {
		Name          string `json:"name"`
		State         string `json:"state"`
		Paused        bool   `json:"paused"`
		PausedCluster bool   `json:"paused_cluster"`
	}
	var ls []lsJob
	if err := json.Unmarshal([]byte(wantCode(t, 0, "", append([]string{"jobs", "ls", "-o", "json"}, args...)...)), &ls); err == nil {
		ls = slices.DeleteFunc(ls, func(j lsJob) bool { return j.Name == "broken" })
	}
	if len(ls) != 1 || !ls[0].Paused || !ls[0].PausedCluster || ls[0].State != "paused" {
		t.Errorf("jobs ls while paused: %+v; want job paused, state paused", ls)
	}
	// Paused is a state of its own: the table says so, and jobs check
	// reports no missed tick while paused (with no grace, the latest due
	// tick is one the pause skipped).
	if out := wantCode(t, 0, "", append([]string{"jobs", "ls"}, args...)...); !regexp.MustCompile(`\bjob\s+\S+\s+\S+ \S+\s+paused\s`).MatchString(out) {
		t.Errorf("jobs ls (table) while paused: STATE is not paused:\n%s", out)
	}
	if out := wantCode(t, 0, "", append([]string{"jobs", "check", "--grace", "0", "job"}, args...)...); strings.Contains(out, "missed") || !strings.Contains(out, "paused, not checked: job") {
		t.Errorf("jobs check while paused:\n%s", out)
	}
	// jobs resume: the ticks run again.
	wantCode(t, 0, "", append([]string{"jobs", "resume", "job"}, args...)...)
	resumed := time.Now()
	deadline = time.Now().Add(10 * iv)
	for count(false, resumed) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	if n := count(false, resumed); n < 2 {
		t.Errorf("%d runs in the %v after resume", n, 10*iv)
	}
	if out := wantCode(t, 0, "", append([]string{"jobs", "ls"}, args...)...); !strings.Contains(out, "STATE") || strings.Contains(out, "paused") {
		t.Errorf("jobs ls after resume:\n%s", out)
	}
}
