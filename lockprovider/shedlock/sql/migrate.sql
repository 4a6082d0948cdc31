-- Columns ShedLock ignores (its statements name their columns), all
-- nullable so its INSERTs keep working:
--   owner           owner token of the current or last Go grant;
--   at_least_until  that grant's minimum-hold bound, as an instant;
--   fence           fencing token of the last Go grant;
--   last_tick       newest tick granted to a Go replica.
-- Adding a nullable column without a default only changes the catalog,
-- but it takes a short ACCESS EXCLUSIVE lock on the table.
ALTER TABLE {{.Table}}
    ADD COLUMN IF NOT EXISTS owner          text,
    ADD COLUMN IF NOT EXISTS at_least_until timestamptz,
    ADD COLUMN IF NOT EXISTS fence          bigint,
    ADD COLUMN IF NOT EXISTS last_tick      timestamptz
