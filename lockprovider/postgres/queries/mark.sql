-- Register waiters for names until now + $2, so that Release notifies for
-- them; renewed by the listener while waiters remain. Marks that lapsed a
-- while ago (their processes stopped waiting or died) are deleted on the
-- way. Run on the listening connection, which has a short lock_timeout;
-- rows are written in name order, so concurrent marks cannot deadlock.
-- $1 names (text[]), $2 how long the mark lasts.
WITH gone AS (
    DELETE FROM {{.Waiters}} w
    WHERE w.until < clock_timestamp() - interval '5 minutes'
)
INSERT INTO {{.Waiters}} AS w (name, until)
SELECT n.name, clock_timestamp() + $2::interval
FROM (SELECT DISTINCT unnest($1::text[]) AS name ORDER BY 1) n
ON CONFLICT (name) DO UPDATE SET until = GREATEST(w.until, excluded.until)
