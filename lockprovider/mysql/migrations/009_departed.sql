-- Departed registry entries (lockprovider.Departures): a row whose until
-- has passed is kept for batontype.DepartedRetention; left_at is set by
-- Deregister (a clean shutdown), NULL for an entry that lapsed (gone).
-- Added as 007_release_count.sql adds its column: a procedure that
-- ignores error 1060 (duplicate column), which Migrate calls every time.
CREATE PROCEDURE {{proc "add_left_at"}}()
    SQL SECURITY INVOKER
BEGIN
    DECLARE CONTINUE HANDLER FOR 1060 BEGIN END;
    ALTER TABLE {{.Registry}} ADD COLUMN left_at DATETIME(6) NULL;
END
//
CALL {{proc "add_left_at"}}()
//
