-- The paused jobs and the live requests, dropping expired requests on the
-- way (SKIP LOCKED: concurrent readers never wait for, nor deadlock on,
-- each other's deletes).
WITH gone AS (
    DELETE FROM {{.RunQueue}} WHERE id IN (
        SELECT id FROM {{.RunQueue}} WHERE until <= clock_timestamp() FOR UPDATE SKIP LOCKED)
)
SELECT false, job, '', '', NULL::timestamptz, NULL::timestamptz FROM {{.Paused}}
UNION ALL
SELECT true, job, id, requested_by, requested_at, until FROM {{.RunQueue}} WHERE until > clock_timestamp()
ORDER BY 1, 5, 2
