-- Who force-released a run's lease and when (lockprovider.Admin.ForceRelease,
-- batontype.RunRecord.ReleasedBy and ReleasedAt): set by the force-release
-- on the row of the freed token; empty and NULL for every other run.
ALTER TABLE {{.Runs}} ADD COLUMN IF NOT EXISTS released_by text NOT NULL DEFAULT '';
ALTER TABLE {{.Runs}} ADD COLUMN IF NOT EXISTS released_at timestamptz;
