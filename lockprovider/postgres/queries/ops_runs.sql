-- Runs of a job started in [$2, $3) (NULL: unbounded), newest first.
SELECT r.job, r.tick, r.locked_by, r.token, r.started_at, r.finished_at, r.outcome, r.error, r.catch_up, r.manual, r.stack, r.released_by, r.released_at
FROM {{.Runs}} r
WHERE r.job = $1
  AND ($2::timestamptz IS NULL OR r.started_at >= $2)
  AND ($3::timestamptz IS NULL OR r.started_at < $3)
ORDER BY r.started_at DESC, r.token DESC
LIMIT $4
