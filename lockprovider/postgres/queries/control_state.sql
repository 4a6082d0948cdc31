-- The paused jobs with the starts of their pauses (kind 0), each job's
-- latest ended pause (kind 1) and the live requests (kind 2), dropping
-- expired requests on the way (SKIP LOCKED: concurrent readers never wait
-- for, nor deadlock on, each other's deletes).
WITH gone AS (
    DELETE FROM {{.RunQueue}} WHERE id IN (
        SELECT id FROM {{.RunQueue}} WHERE until <= clock_timestamp() FOR UPDATE SKIP LOCKED)
)
SELECT 0, job, '', '', paused_at, NULL::timestamptz FROM {{.Paused}}
UNION ALL
SELECT 1, job, '', '', paused_at, resumed_at FROM {{.Resumed}}
UNION ALL
SELECT 2, job, id, requested_by, requested_at, until FROM {{.RunQueue}} WHERE until > clock_timestamp()
ORDER BY 1, 5, 2
