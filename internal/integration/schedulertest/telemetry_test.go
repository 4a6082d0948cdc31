package schedulertest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/observe"
	"github.com/baton-go/baton/scheduler"
)

type tagKey struct{}

// spanLike records events and, like a tracing adapter, derives a context
// on each begin event, so the test can see which context every event and
// the job function were given.
type spanLike struct {
	instance string
	mu       sync.Mutex
	events   []tagged
}

type tagged struct {
	instance string
	tag      string // the context's tag when the event was reported
	observe.Event
}

func tagOf(ctx context.Context) string { s, _ := ctx.Value(tagKey{}).(string); return s }

func (o *spanLike) Observe(ctx context.Context, e observe.Event) context.Context {
	o.mu.Lock()
	o.events = append(o.events, tagged{o.instance, tagOf(ctx), e})
	o.mu.Unlock()
	if e.Kind.Begins() {
		return context.WithValue(ctx, tagKey{}, tagOf(ctx)+"/"+e.Kind.String())
	}
	return ctx
}

func (o *spanLike) of(job string) []tagged {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []tagged
	for _, e := range o.events {
		if e.Job == job || (e.Job == "" && e.Name == job) {
			out = append(out, e)
		}
	}
	return out
}

// Two replicas run one tick of a succeeding, a failing, a panicking and a
// lock-losing job: the observer sees, on the winner, attempt → claim →
// start → finish → release → done with the right outcome and token, the
// run's events under the context its begin events returned, and on the
// other replica a skip; the hooks are fed from the same events.
func TestObserverEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		var jobCtx sync.Map // job -> tag of the context the job function got
		jobs := map[string]scheduler.Func{
			"ok": func(ctx context.Context, run scheduler.Run) error { jobCtx.Store(run.Job, tagOf(ctx)); return nil },
			"fail": func(ctx context.Context, run scheduler.Run) error {
				jobCtx.Store(run.Job, tagOf(ctx))
				return errors.New("nope")
			},
			"boom": func(ctx context.Context, run scheduler.Run) error { jobCtx.Store(run.Job, tagOf(ctx)); panic("kaboom") },
			"lost": func(ctx context.Context, run scheduler.Run) error {
				jobCtx.Store(run.Job, tagOf(ctx))
				<-ctx.Done() // the lease (AtMostFor 20s) ends under the job
				return context.Cause(ctx)
			},
		}
		var observers []*spanLike
		var failedHooks sync.Map
		for _, name := range []string{"a", "b"} {
			o := &spanLike{instance: name}
			observers = append(observers, o)
			s := newSched(t, p, &scheduler.Config{Observer: observe.Join(scheduler.Hooks{
				Failed: func(ev scheduler.Event) { failedHooks.Store(ev.Job, ev.Err) },
			}, o)})
			for job, fn := range jobs {
				must(s.Every(time.Minute).Locked(job, scheduler.AtMostFor(20*time.Second)).Do(fn))
			}
			start(t, s)
		}
		time.Sleep(time.Minute + 30*time.Second)
		synctest.Wait()

		want := map[string]string{"ok": observe.OutcomeSucceeded, "fail": observe.OutcomeFailed,
			"boom": observe.OutcomePanicked, "lost": observe.OutcomeLockLost}
		for job, outcome := range want {
			var winner, loser []tagged
			for _, o := range observers {
				evs := o.of(job)
				if slices.ContainsFunc(evs, func(e tagged) bool { return e.Kind == observe.JobClaimed }) {
					winner = append(winner, evs...)
				} else {
					loser = append(loser, evs...)
				}
			}
			var kinds, losses []string
			for _, e := range winner {
				if e.Kind == observe.LockLost || e.Kind == observe.JobLockLost {
					// Reported just after the job's context is cancelled:
					// before or after the run's end.
					losses = append(losses, e.Kind.String())
					continue
				}
				kinds = append(kinds, e.Kind.String())
			}
			wantLosses := ""
			if job == "lost" {
				wantLosses = "lock.lost job.lock_lost"
			}
			if got, want := strings.Join(kinds, " "), "job.attempt job.claimed job.started job.finished lock.released job.done"; got != want || strings.Join(losses, " ") != wantLosses {
				t.Errorf("%s: winner's events %q and losses %q, want %q and %q", job, got, losses, want, wantLosses)
				continue
			}
			winner = slices.DeleteFunc(winner, func(e tagged) bool { return e.Kind == observe.LockLost || e.Kind == observe.JobLockLost })
			tick := time.Date(2000, 1, 1, 0, 1, 0, 0, time.UTC)
			token := winner[1].Token
			for _, e := range winner {
				if !e.Tick.Equal(tick) || e.Name != job || e.Token != token && e.Kind != observe.JobAttempt {
					t.Errorf("%s: %v has name %q tick %v token %d, want %q %v %d", job, e.Kind, e.Name, e.Tick, e.Token, job, tick, token)
				}
				wantTag := "/job.attempt"
				switch e.Kind {
				case observe.JobAttempt:
					wantTag = ""
				case observe.JobFinished:
					wantTag = "/job.attempt/job.started"
				}
				if e.tag != wantTag {
					t.Errorf("%s: %v reported with context %q, want %q", job, e.Kind, e.tag, wantTag)
				}
			}
			if token <= 0 {
				t.Errorf("%s: claimed token %d", job, token)
			}
			fin := winner[slices.IndexFunc(winner, func(e tagged) bool { return e.Kind == observe.JobFinished })]
			done := winner[len(winner)-1]
			if fin.Outcome != outcome || done.Outcome != outcome {
				t.Errorf("%s: finished %q, done %q, want %q", job, fin.Outcome, done.Outcome, outcome)
			}
			if (outcome == observe.OutcomeSucceeded) != (fin.Err == nil) {
				t.Errorf("%s: finished with err %v", job, fin.Err)
			}
			if job == "lost" && (fin.Duration < 19*time.Second || fin.Duration > 20*time.Second) {
				t.Errorf("lost: run lasted %v, want the trust window of the 20s lease", fin.Duration)
			}
			if rel := winner[len(winner)-2]; rel.Outcome != observe.OutcomeOK {
				t.Errorf("%s: release outcome %q (%v)", job, rel.Outcome, rel.Err)
			}
			if tag, _ := jobCtx.Load(job); tag != "/job.attempt/job.started" {
				t.Errorf("%s: the job function ran with context %q, want the run's", job, tag)
			}
			_, hooked := failedHooks.Load(job)
			if hooked != (outcome != observe.OutcomeSucceeded) {
				t.Errorf("%s: Failed hook called %v", job, hooked)
			}
			if len(loser) != 3 || loser[0].Kind != observe.JobAttempt || loser[1].Kind != observe.JobSkipped ||
				loser[2].Kind != observe.JobDone || loser[2].Outcome != observe.OutcomeSkipped {
				t.Errorf("%s: other replica's events = %+v, want attempt, skip, done", job, loser)
			} else if r := loser[1].Outcome; r != observe.OutcomeHeld && r != observe.OutcomeStaleTick {
				t.Errorf("%s: skip reason %q", job, r)
			} else if !errors.Is(loser[1].Err, batontype.ErrNotAcquired) && !errors.Is(loser[1].Err, batontype.ErrStaleTick) {
				t.Errorf("%s: skip error %v", job, loser[1].Err)
			}
		}
	})
}

// A tick that finds the previous run still going is a skip with its own
// reason, without an attempt; a catch-up is reported before its run.
func TestObserverStillRunningAndCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newMemory(t, nil)
		time.Sleep(3*time.Hour + 10*time.Minute)
		o := &spanLike{}
		s := newSched(t, p, &scheduler.Config{Observer: o})
		must(s.Every(time.Hour).Locked("hourly", scheduler.AtMostFor(time.Minute), scheduler.CatchUp()).Do(
			func(context.Context, scheduler.Run) error { return nil }))
		release := make(chan struct{})
		must(s.Every(time.Minute).Name("local").Do(func(ctx context.Context, _ scheduler.Run) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}))
		start(t, s)
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		close(release)
		synctest.Wait()

		hourly := o.of("hourly")
		if len(hourly) == 0 || hourly[0].Kind != observe.JobCatchUp || hourly[0].Outcome != observe.OutcomeOK || !hourly[0].CatchUp {
			t.Errorf("hourly: first event %+v, want a catch-up", hourly)
		}
		var skips, runs int
		for _, e := range o.of("local") {
			switch e.Kind {
			case observe.JobSkipped:
				skips++
				if e.Outcome != observe.OutcomeStillRunning || !errors.Is(e.Err, scheduler.ErrStillRunning) {
					t.Errorf("local: skip %q %v", e.Outcome, e.Err)
				}
			case observe.JobStarted:
				runs++
			case observe.JobAttempt, observe.JobClaimed:
				t.Errorf("local: a job without a lock reported %v", e.Kind)
			}
		}
		if runs != 1 || skips != 1 {
			t.Errorf("local: %d runs and %d still-running skips, want 1 and 1", runs, skips)
		}
	})
}
