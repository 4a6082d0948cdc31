-- The latest ended cluster-wide pause of each job (ControlState.Pauses):
-- the resume that deletes a job's row of {{.Paused}} writes its pause
-- here, replacing the job's previous one. A job paused now has its open
-- pause in {{.Paused}} (paused_at). A separate table, not a column of
-- {{.Paused}}, so that a row there still means "paused" to every version.
CREATE TABLE IF NOT EXISTS {{.Resumed}} (
    job        text        PRIMARY KEY,
    paused_at  timestamptz NOT NULL,
    resumed_at timestamptz NOT NULL
);
