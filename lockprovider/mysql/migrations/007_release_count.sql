-- The lease row's release counter: releases counts the releases that
-- ended the lease at once (not those that left it held until its
-- AtLeastFor bound). MySQL has no LISTEN/NOTIFY, so the providers waiting
-- on a name poll this counter (see NotifyRelease): a release announces
-- itself in the row it writes anyway, where it used to bump a row of the
-- waiters table in a second, joined table.
--
-- Added as 006_run_release.sql adds its columns (MySQL 8 has no ADD
-- COLUMN IF NOT EXISTS): a procedure that ignores error 1060 (duplicate
-- column), which Migrate calls every time.
CREATE PROCEDURE {{proc "add_release_count"}}()
    SQL SECURITY INVOKER
BEGIN
    DECLARE CONTINUE HANDLER FOR 1060 BEGIN END;
    ALTER TABLE {{.Locks}} ADD COLUMN releases BIGINT NOT NULL DEFAULT 0;
END
//
CALL {{proc "add_release_count"}}()
//
