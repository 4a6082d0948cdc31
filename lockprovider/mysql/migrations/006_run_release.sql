-- Who force-released a run's lease and when (lockprovider.Admin.ForceRelease,
-- batontype.RunRecord.ReleasedBy and ReleasedAt): set by force_release on
-- the row of the freed token; empty and NULL for every other run.
--
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS (MariaDB has), so the columns
-- are added by a procedure that ignores error 1060 (duplicate column):
-- the one ALTER adds both or neither, so a table that has one has both.
-- Migrate runs the CALL every time; on an upgraded table it does nothing.
CREATE PROCEDURE {{proc "add_release_cols"}}()
    SQL SECURITY INVOKER
BEGIN
    DECLARE CONTINUE HANDLER FOR 1060 BEGIN END;
    ALTER TABLE {{.Runs}}
        ADD COLUMN released_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
        ADD COLUMN released_at DATETIME(6) NULL;
END
//
CALL {{proc "add_release_cols"}}()
//
