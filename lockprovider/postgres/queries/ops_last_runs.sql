-- The newest run of $1 and its newest success, each flagged.
(SELECT r.job, r.tick, r.locked_by, r.token, r.started_at, r.finished_at, r.outcome, r.error, r.catch_up, r.manual, r.stack, r.released_by, r.released_at, false
 FROM {{.Runs}} r WHERE r.job = $1 ORDER BY r.token DESC LIMIT 1)
UNION ALL
(SELECT r.job, r.tick, r.locked_by, r.token, r.started_at, r.finished_at, r.outcome, r.error, r.catch_up, r.manual, r.stack, r.released_by, r.released_at, true
 FROM {{.Runs}} r WHERE r.job = $1 AND r.outcome = 'succeeded' ORDER BY r.token DESC LIMIT 1)
