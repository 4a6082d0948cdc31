-- The stack of a run that panicked (lockprovider.RunEnd.Stack), cut to
-- batontype.MaxRunStack bytes; empty for every other run.
ALTER TABLE {{.Runs}} ADD COLUMN IF NOT EXISTS stack text NOT NULL DEFAULT '';
