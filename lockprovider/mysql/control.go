package mysql

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/lockprovider"
)

// controlName is the name of the waiters table's row that counts control
// changes (see WatchControl). A lock name cannot contain a control
// character, so the poll that reads it with the lock names' counters
// never mistakes it for a lock.
const controlName = "\x1fbaton:control"

// controlQueries are the statements of lockprovider.Control.
type controlQueries struct {
	pause, request, claim, state string
}

func newControlQueries(n names) controlQueries {
	return controlQueries{
		pause:   "CALL " + n.proc("ctl_pause") + "(?, ?, ?)",
		request: "CALL " + n.proc("ctl_request") + "(?, ?, ?, ?, ?)",
		claim:   "CALL " + n.proc("ctl_claim") + "(?)",
		state:   "CALL " + n.proc("ctl_state") + "()",
	}
}

// SetPaused implements lockprovider.Control in one CALL, which also
// announces the change to watchers. A flag lasts until it is cleared. The
// flag's row holds when the pause began; the resume that deletes it
// records the ended pause in the _resumed table, one row per job (the
// latest).
func (p *Provider) SetPaused(ctx context.Context, job string, paused bool) error {
	return p.run.Exec(ctx, batontype.ValidateName(job), "set paused", job, p.q.control.pause, job, paused, controlName)
}

// RequestRun implements lockprovider.Control in one CALL.
func (p *Provider) RequestRun(ctx context.Context, r batontype.RunRequest) (batontype.RunRequest, error) {
	r, err := check.Request(ctx, r)
	if err != nil {
		return batontype.RunRequest{}, err
	}
	var at, until int64
	err = p.db.QueryRowContext(ctx, p.q.control.request, r.ID, r.Job, r.RequestedBy, r.TTL.Microseconds(), controlName).
		Scan(&at, &until)
	if err != nil {
		return batontype.RunRequest{}, opError("request run", r.Job, err)
	}
	r.Requested, r.Until = time.UnixMicro(at), time.UnixMicro(until)
	return r, nil
}

// ClaimRun implements lockprovider.Control in one CALL.
func (p *Provider) ClaimRun(ctx context.Context, id string) (batontype.RunRequest, error) {
	if err := check.Args(ctx, batontype.ValidateRunRequestID(id)); err != nil {
		return batontype.RunRequest{}, err
	}
	var (
		job, by   sql.NullString
		at, until sql.NullInt64
		live      bool
	)
	if err := p.db.QueryRowContext(ctx, p.q.control.claim, id).Scan(&job, &by, &at, &until, &live); err != nil {
		return batontype.RunRequest{}, opError("claim run request", "", err)
	}
	if !job.Valid || !live {
		return batontype.RunRequest{}, batontype.ErrNoRequest
	}
	return batontype.RunRequest{ID: id, Job: job.String, RequestedBy: by.String,
		Requested: time.UnixMicro(at.Int64), Until: time.UnixMicro(until.Int64)}, nil
}

// ControlState implements lockprovider.Control in one CALL.
func (p *Provider) ControlState(ctx context.Context) (batontype.ControlState, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return batontype.ControlState{}, err
	}
	rows, err := p.db.QueryContext(ctx, p.q.control.state)
	if err != nil {
		return batontype.ControlState{}, opError("control state", "", err)
	}
	defer rows.Close()
	var st batontype.ControlState
	for rows.Next() {
		var (
			kind        int
			job, id, by string
			at, until   sql.NullInt64
		)
		if err := rows.Scan(&kind, &job, &id, &by, &at, &until); err != nil {
			return batontype.ControlState{}, opError("control state", "", err)
		}
		switch kind { // see ctl_state
		case 0: // a paused job and when its pause began
			st.Paused = append(st.Paused, job)
			st.Pauses = append(st.Pauses, batontype.PauseSpan{Job: job, From: time.UnixMicro(at.Int64)})
			continue
		case 1: // a job's latest ended pause
			st.Pauses = append(st.Pauses, batontype.PauseSpan{Job: job, From: time.UnixMicro(at.Int64), Until: time.UnixMicro(until.Int64)})
			continue
		}
		st.Requests = append(st.Requests, batontype.RunRequest{ID: id, Job: job, RequestedBy: by,
			Requested: time.UnixMicro(at.Int64), Until: time.UnixMicro(until.Int64)})
	}
	if err := rows.Err(); err != nil {
		return batontype.ControlState{}, opError("control state", "", err)
	}
	slices.Sort(st.Paused)
	batontype.SortPauses(st.Pauses)
	return st, nil
}

// WatchControl implements lockprovider.Control on the provider's poller
// (see NotifyRelease): every change bumps a counter row that the poller
// reads every Config.PollInterval while watchers exist, so a change is
// announced within about one interval.
func (p *Provider) WatchControl(ctx context.Context, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.watch.add(ctx, controlName, ch)
}
