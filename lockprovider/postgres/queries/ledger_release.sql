-- A release that also completes the run row: release.sql's UPDATE as the
-- CTE rel (see ops.go), then an UPDATE of the run row by its primary key,
-- whatever rel found: a run whose lease was lost still gets its outcome.
-- Only unindexed columns change, so the update is HOT when the page has
-- room (the table's fillfactor keeps some). A run whose row is gone was
-- trimmed as beyond the retention while it ran, and is not recorded again
-- (see lockprovider.Retention): a fallback insert would cost every
-- release the set-up of a second write. The answer is one row if rel
-- released, none if not.
-- The run finished at its start plus $6 when the caller measured it (see
-- lockprovider.RunEnd.Elapsed), else now.
-- $1 name, $2 owner (release.sql), $3 token, $4 outcome, $5 error,
-- $6 elapsed (zero: not measured), $7 stack.
, run AS (
    UPDATE {{.Runs}} AS r SET
        finished_at = CASE WHEN $6::interval > interval '0' THEN r.started_at + $6::interval ELSE clock_timestamp() END,
        outcome     = $4::text,
        error       = $5::text,
        stack       = $7::text
    WHERE r.job = $1 AND r.token = $3::bigint
)
SELECT 1 FROM rel
