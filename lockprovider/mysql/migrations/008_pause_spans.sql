-- The latest ended cluster-wide pause of each job (ControlState.Pauses):
-- ctl_pause's resume, which deletes the job's row of {{.Paused}}, writes
-- its pause here, replacing the job's previous one. A job paused now has
-- its open pause in {{.Paused}} (paused_at). A table of its own, not a
-- column of {{.Paused}}, so that a row there still means "paused" to every
-- version; CREATE TABLE IF NOT EXISTS makes the upgrade idempotent.
CREATE TABLE IF NOT EXISTS {{.Resumed}} (
    job        VARBINARY(200) NOT NULL,
    paused_at  DATETIME(6)    NOT NULL,
    resumed_at DATETIME(6)    NOT NULL,
    PRIMARY KEY (job)
) ENGINE=InnoDB
//
