-- Departed registry entries (lockprovider.Departures): a row whose until
-- has passed is kept for batontype.DepartedRetention; left_at is set by
-- Deregister (a clean shutdown), NULL for an entry that lapsed (gone).
ALTER TABLE {{.Registry}} ADD COLUMN IF NOT EXISTS left_at timestamptz;
