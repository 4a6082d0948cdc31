package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/lockprovider"
)

// Table suffixes of the control state, next to the lease table.
const (
	pausedSuffix   = "_paused"
	runQueueSuffix = "_runq"
	resumedSuffix  = "_resumed"
)

// controlPayload is the notification payload that announces a control
// change on the release channel (see release.sql). A lock name cannot
// contain a control character, so it never meets a lock's waiters.
const controlPayload = "\x1fbaton:control"

// controlQueries are the rendered statements of lockprovider.Control.
type controlQueries struct {
	pause, request, claim, state string
}

func (q *controlQueries) render(p *Provider) error {
	for _, f := range []struct {
		file string
		dst  *string
	}{
		{"control_pause.sql", &q.pause},
		{"control_request.sql", &q.request},
		{"control_claim.sql", &q.claim},
		{"control_state.sql", &q.state},
	} {
		b, err := queryFS.ReadFile("queries/" + f.file)
		if err != nil {
			return err
		}
		if *f.dst, err = render(f.file, string(b), p.names); err != nil {
			return err
		}
	}
	return nil
}

// SetPaused implements lockprovider.Control in one statement, which also
// announces the change to watchers. A flag lasts until it is cleared. The
// flag's row holds when the pause began; the resume that deletes it
// records the ended pause in the _resumed table, one row per job (the
// latest).
func (p *Provider) SetPaused(ctx context.Context, job string, paused bool) error {
	return p.run.Exec(ctx, batontype.ValidateName(job), "set paused", job, p.control.pause, job, paused, controlPayload)
}

// RequestRun implements lockprovider.Control in one statement.
func (p *Provider) RequestRun(ctx context.Context, r batontype.RunRequest) (batontype.RunRequest, error) {
	r, err := check.Request(ctx, r)
	if err != nil {
		return batontype.RunRequest{}, err
	}
	var ignored bool
	err = p.db.QueryRow(ctx, p.control.request, r.ID, r.Job, r.RequestedBy, r.TTL, controlPayload).
		Scan(&r.Requested, &r.Until, &ignored)
	if err != nil {
		return batontype.RunRequest{}, opError("request run", r.Job, err)
	}
	return r, nil
}

// ClaimRun implements lockprovider.Control in one statement.
func (p *Provider) ClaimRun(ctx context.Context, id string) (batontype.RunRequest, error) {
	if err := check.Args(ctx, batontype.ValidateRunRequestID(id)); err != nil {
		return batontype.RunRequest{}, err
	}
	r := batontype.RunRequest{ID: id}
	var live bool
	err := p.db.QueryRow(ctx, p.control.claim, id).Scan(&r.Job, &r.RequestedBy, &r.Requested, &r.Until, &live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return batontype.RunRequest{}, batontype.ErrNoRequest
	case err != nil:
		return batontype.RunRequest{}, opError("claim run request", "", err)
	case !live:
		return batontype.RunRequest{}, batontype.ErrNoRequest
	}
	return r, nil
}

// ControlState implements lockprovider.Control in one statement.
func (p *Provider) ControlState(ctx context.Context) (batontype.ControlState, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return batontype.ControlState{}, err
	}
	rows, err := p.db.Query(ctx, p.control.state)
	if err != nil {
		return batontype.ControlState{}, opError("control state", "", err)
	}
	var st batontype.ControlState
	var (
		kind        int
		job, id, by string
		at, until   pgtype.Timestamptz
	)
	_, err = pgx.ForEachRow(rows, []any{&kind, &job, &id, &by, &at, &until}, func() error {
		switch kind {
		case stateRowPaused:
			st.Paused = append(st.Paused, job)
			st.Pauses = append(st.Pauses, batontype.PauseSpan{Job: job, From: at.Time})
			return nil
		case stateRowEnded:
			st.Pauses = append(st.Pauses, batontype.PauseSpan{Job: job, From: at.Time, Until: until.Time})
			return nil
		}
		st.Requests = append(st.Requests, batontype.RunRequest{ID: id, Job: job, RequestedBy: by, Requested: at.Time, Until: until.Time})
		return nil
	})
	if err != nil {
		return batontype.ControlState{}, opError("control state", "", err)
	}
	slices.Sort(st.Paused) // byte order, whatever the database's collation
	batontype.SortPauses(st.Pauses)
	return st, nil
}

// Kinds of the rows of control_state.sql.
const (
	stateRowPaused = 0 // a paused job and when its pause began
	stateRowEnded  = 1 // a job's latest ended pause
	// 2: a pending run request
)

// WatchControl implements lockprovider.Control on the provider's release
// listener (see NotifyRelease): the same dedicated LISTEN connection, the
// same reconnect behaviour, and the same ErrNoListener when the provider
// cannot open one.
func (p *Provider) WatchControl(ctx context.Context, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.listen.add(ctx, controlPayload, ch)
}
