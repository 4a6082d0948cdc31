-- Claim request $1: the DELETE lets exactly one of concurrent callers have
-- the row. An expired row is deleted too but reported as not live.
DELETE FROM {{.RunQueue}} WHERE id = $1
RETURNING job, requested_by, requested_at, until, until > clock_timestamp()
