-- The run ledger: one row per claimed tick, keyed by job and fencing token
-- (unique per grant, increasing in claim order), numbered per job by seq
-- (1, 2, 3, ...; tokens have gaps). The claim inserts the row, the release
-- completes it; a row without finished_at is a run still going or one
-- whose process died. Every 16th claim of a job deletes up to 32 of its
-- rows beyond the retention (run_open), so the table stays bounded.
CREATE TABLE IF NOT EXISTS {{.Runs}} (
    job         VARBINARY(200) NOT NULL,
    token       BIGINT         NOT NULL,
    seq         BIGINT         NOT NULL,
    tick        DATETIME(6)    NULL,
    locked_by   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    started_at  DATETIME(6)    NOT NULL,
    finished_at DATETIME(6)    NULL,
    outcome     VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
    error       VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    catch_up    BOOLEAN        NOT NULL DEFAULT FALSE,
    manual      BOOLEAN        NOT NULL DEFAULT FALSE,
    -- The stack of a run that panicked (lockprovider.RunEnd.Stack), cut
    -- to batontype.MaxRunStack bytes; empty for every other run.
    stack       VARCHAR(8192) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    PRIMARY KEY (job, token)
) ENGINE=InnoDB
//
-- The job registry: one row per live scheduler instance, with its jobs
-- (JSON) and the time its entry lapses unless renewed. locked_by is
-- VARBINARY, compared byte by byte like the lock names.
CREATE TABLE IF NOT EXISTS {{.Registry}} (
    locked_by    VARBINARY(255) NOT NULL,
    info         MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    heartbeat_at DATETIME(6)    NOT NULL,
    until        DATETIME(6)    NOT NULL,
    PRIMARY KEY (locked_by)
) ENGINE=InnoDB
//
-- The ledger's part of a grant (acquire_run, acquire_batch): the run row,
-- numbered after the job's newest, then, when the number is a multiple of
-- 16 (lockprovider.RetentionSlack), up to 32 of the job's oldest rows
-- beyond the retention deleted. Claims of a job are serialised by its
-- lease, so no other claim numbers or trims these rows meanwhile.
-- p_started and p_tick are microseconds since the epoch, p_max_age
-- microseconds.
CREATE PROCEDURE {{proc "run_open"}}(IN p_job VARBINARY(200), IN p_token BIGINT, IN p_tick BIGINT,
    IN p_by VARCHAR(255) CHARACTER SET utf8mb4, IN p_started BIGINT, IN p_catch_up BOOLEAN, IN p_manual BOOLEAN,
    IN p_max BIGINT, IN p_max_age BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_seq BIGINT DEFAULT 0;
    DECLARE v_started DATETIME(6) DEFAULT {{dt "p_started"}};
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    SELECT seq INTO v_seq FROM {{.Runs}} WHERE job = p_job ORDER BY token DESC LIMIT 1;
    SET v_seq = v_seq + 1;
    INSERT IGNORE INTO {{.Runs}} (job, token, seq, tick, locked_by, started_at, catch_up, manual)
    VALUES (p_job, p_token, v_seq, {{dt "p_tick"}}, p_by, v_started, p_catch_up, p_manual);
    IF v_seq % 16 = 0 THEN
        DELETE FROM {{.Runs}}
        WHERE job = p_job AND (seq <= v_seq - p_max OR started_at < v_started - INTERVAL p_max_age MICROSECOND)
        ORDER BY token LIMIT 32;
    END IF;
END
//
-- The ledger's part of a release (release_run, release_batch): the run
-- row completed, whatever the release found (a run whose lease was lost
-- still gets its outcome). It finished at its start plus p_elapsed when
-- the caller measured it (lockprovider.RunEnd.Elapsed), else now. A run
-- whose row is gone (trimmed while it ran) is not recorded again.
CREATE PROCEDURE {{proc "run_close"}}(IN p_job VARBINARY(200), IN p_token BIGINT,
    IN p_outcome VARCHAR(32) CHARACTER SET ascii, IN p_error VARCHAR(1024) CHARACTER SET utf8mb4, IN p_elapsed BIGINT,
    IN p_stack VARCHAR(8192) CHARACTER SET utf8mb4)
    SQL SECURITY INVOKER
BEGIN
    UPDATE {{.Runs}} SET
        finished_at = IF(p_elapsed > 0, started_at + INTERVAL p_elapsed MICROSECOND, UTC_TIMESTAMP(6)),
        outcome     = p_outcome,
        error       = p_error,
        stack       = p_stack
    WHERE job = p_job AND token = p_token;
END
//
-- AcquireRun: acquire, and for a new grant the run row, in one CALL.
CREATE PROCEDURE {{proc "acquire_run"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64),
    IN p_by VARCHAR(255) CHARACTER SET utf8mb4, IN p_most BIGINT, IN p_least BIGINT, IN p_tick BIGINT,
    IN p_catch_up BOOLEAN, IN p_manual BOOLEAN, IN p_max BIGINT, IN p_max_age BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_wait BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
    DECLARE v_granted, v_mine BOOLEAN;
    DECLARE v_now, v_at, v_until, v_least, v_fence, v_tick BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET SESSION innodb_lock_wait_timeout = 0;
    CALL {{proc "acq"}}(p_name, p_owner, p_by, p_most, p_least, p_tick,
        v_granted, v_now, v_mine, v_at, v_until, v_least, v_fence, v_tick);
    SET SESSION innodb_lock_wait_timeout = v_wait;
    IF v_granted AND v_mine THEN
        CALL {{proc "run_open"}}(p_name, v_fence, p_tick, p_by, v_at, p_catch_up, p_manual, p_max, p_max_age);
    END IF;
    SELECT v_now, v_mine, v_at, v_until, v_least, v_fence, v_tick;
END
//
-- ReleaseRun: release and complete the run row in one CALL.
CREATE PROCEDURE {{proc "release_run"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64), IN p_token BIGINT,
    IN p_outcome VARCHAR(32) CHARACTER SET ascii, IN p_error VARCHAR(1024) CHARACTER SET utf8mb4, IN p_elapsed BIGINT,
    IN p_stack VARCHAR(8192) CHARACTER SET utf8mb4)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_held BOOLEAN;
    CALL {{proc "rel"}}(p_name, p_owner, v_held);
    CALL {{proc "run_close"}}(p_name, p_token, p_outcome, p_error, p_elapsed, p_stack);
    SELECT v_held;
END
//
-- ForceRelease: end the live lease on p_name whoever holds it (only the
-- one with fence p_token unless that is 0), count it in releases as rel does, and
-- report what was freed; a NULL fence means nothing was. The UPDATE
-- frees only the lease the SELECT read (same fence), so a lease granted
-- in between is never freed in its place. The row stays, so the next
-- grant's fence is larger. The run row of the freed lease (the ledger's
-- row of job p_name with that fence), if there is one, records the
-- operator p_released_by and the time (columns of 006_run_release.sql).
CREATE PROCEDURE {{proc "force_release"}}(IN p_name VARBINARY(200), IN p_token BIGINT,
    IN p_released_by VARCHAR(255) CHARACTER SET utf8mb4)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_fence, v_at, v_until, v_tick, v_least BIGINT DEFAULT NULL;
    DECLARE v_by VARCHAR(255) CHARACTER SET utf8mb4 DEFAULT NULL;
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    SELECT fence, locked_by, {{us "locked_at"}}, {{us "lock_until"}}, {{us "last_tick"}}, {{us "at_least_until"}}
    INTO v_fence, v_by, v_at, v_until, v_tick, v_least
    FROM {{.Locks}} WHERE name = p_name AND lock_until > v_now AND (p_token = 0 OR fence = p_token);
    IF v_fence IS NOT NULL THEN
        SET v_now = UTC_TIMESTAMP(6);
        UPDATE {{.Locks}} SET lock_until = v_now, at_least_until = v_now, releases = releases + 1
        WHERE name = p_name AND fence = v_fence AND lock_until > {{rowNow}};
        IF ROW_COUNT() = 0 THEN
            SET v_fence = NULL;
        ELSE
            UPDATE {{.Runs}} SET released_by = p_released_by, released_at = v_now
            WHERE job = p_name AND token = v_fence;
        END IF;
    END IF;
    SELECT v_fence, v_by, v_at, v_until, v_tick, v_least;
END
//
-- Register (lockprovider.Registry): publish an instance and drop the
-- entries of others departed (lapsed, or left: left_at, added by
-- 009_departed.sql) longer than batontype.DepartedRetention (1 hour) ago;
-- registering again makes a departed entry live.
CREATE PROCEDURE {{proc "register"}}(IN p_by VARBINARY(255), IN p_info MEDIUMTEXT CHARACTER SET utf8mb4, IN p_ttl BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DELETE FROM {{.Registry}} WHERE until <= v_now - INTERVAL 1 HOUR AND locked_by <> p_by;
    INSERT INTO {{.Registry}} (locked_by, info, heartbeat_at, until, left_at)
    VALUES (p_by, p_info, v_now, v_now + INTERVAL p_ttl MICROSECOND, NULL)
    ON DUPLICATE KEY UPDATE info = p_info, heartbeat_at = v_now, until = v_now + INTERVAL p_ttl MICROSECOND, left_at = NULL;
END
