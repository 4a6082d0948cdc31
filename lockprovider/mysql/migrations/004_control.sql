-- Cluster-wide control of scheduled jobs (lockprovider.Control): the jobs
-- an operator paused, until resumed, and the pending requests to run a
-- job now. A request row is deleted by the replica that claims it (so
-- exactly one claims it) or, once expired, by the next state read.
CREATE TABLE IF NOT EXISTS {{.Paused}} (
    job       VARBINARY(200) NOT NULL,
    paused_at DATETIME(6)    NOT NULL,
    PRIMARY KEY (job)
) ENGINE=InnoDB
//
CREATE TABLE IF NOT EXISTS {{.RunQueue}} (
    id           VARBINARY(64)  NOT NULL,
    job          VARBINARY(200) NOT NULL,
    requested_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    requested_at DATETIME(6)    NOT NULL,
    until        DATETIME(6)    NOT NULL,
    PRIMARY KEY (id)
) ENGINE=InnoDB
//
-- Announce a control change: bump the counter row p_ctl of the waiters
-- table, which watchers poll (see WatchControl). It never lapses.
CREATE PROCEDURE {{proc "ctl_announce"}}(IN p_ctl VARBINARY(200))
    SQL SECURITY INVOKER
BEGIN
    INSERT INTO {{.Waiters}} (name, until, released) VALUES (p_ctl, TIMESTAMP'9999-12-31 00:00:00', 1)
    ON DUPLICATE KEY UPDATE released = released + 1;
END
//
-- Set (p_paused) or clear the paused flag of p_job, and announce it.
-- Setting a set flag keeps its paused_at. Clearing one records the ended
-- pause in the _resumed table (008_pause_spans.sql), replacing the job's
-- previous one; each statement is its own transaction (see 001_locks.sql),
-- so only the resume whose DELETE removed the row it read records it.
CREATE PROCEDURE {{proc "ctl_pause"}}(IN p_job VARBINARY(200), IN p_paused BOOLEAN, IN p_ctl VARBINARY(200))
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_from DATETIME(6) DEFAULT NULL;
    DECLARE v_now DATETIME(6);
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    IF p_paused THEN
        INSERT IGNORE INTO {{.Paused}} (job, paused_at) VALUES (p_job, UTC_TIMESTAMP(6));
    ELSE
        SELECT paused_at INTO v_from FROM {{.Paused}} WHERE job = p_job;
        IF v_from IS NOT NULL THEN
            DELETE FROM {{.Paused}} WHERE job = p_job AND paused_at = v_from;
            IF ROW_COUNT() > 0 THEN
                SET v_now = UTC_TIMESTAMP(6);
                INSERT INTO {{.Resumed}} (job, paused_at, resumed_at) VALUES (p_job, v_from, v_now)
                ON DUPLICATE KEY UPDATE paused_at = v_from, resumed_at = v_now;
            END IF;
        END IF;
    END IF;
    CALL {{proc "ctl_announce"}}(p_ctl);
END
//
-- Record request p_id to run p_job now, by p_by, pending for p_ttl
-- microseconds, announce it, and answer its times (µs since the epoch).
-- One clock reading makes until - requested_at exactly p_ttl.
CREATE PROCEDURE {{proc "ctl_request"}}(IN p_id VARBINARY(64), IN p_job VARBINARY(200),
    IN p_by VARCHAR(255) CHARACTER SET utf8mb4, IN p_ttl BIGINT, IN p_ctl VARBINARY(200))
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    INSERT INTO {{.RunQueue}} (id, job, requested_by, requested_at, until)
    VALUES (p_id, p_job, p_by, v_now, v_now + INTERVAL p_ttl MICROSECOND);
    CALL {{proc "ctl_announce"}}(p_ctl);
    SELECT {{us "v_now"}}, {{us "v_now + INTERVAL p_ttl MICROSECOND"}};
END
//
-- Claim request p_id: the DELETE lets exactly one of concurrent callers
-- have the row (ROW_COUNT() 1: a deleted row always counts as changed).
-- An expired row is deleted too but reported as not live; a NULL job
-- means there was no row to claim.
CREATE PROCEDURE {{proc "ctl_claim"}}(IN p_id VARBINARY(64))
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_job VARBINARY(200) DEFAULT NULL;
    DECLARE v_by VARCHAR(255) CHARACTER SET utf8mb4 DEFAULT NULL;
    DECLARE v_at, v_until BIGINT DEFAULT NULL;
    DECLARE v_live BOOLEAN DEFAULT FALSE;
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    SELECT job, requested_by, {{us "requested_at"}}, {{us "until"}}, until > UTC_TIMESTAMP(6)
    INTO v_job, v_by, v_at, v_until, v_live
    FROM {{.RunQueue}} WHERE id = p_id;
    DELETE FROM {{.RunQueue}} WHERE id = p_id;
    IF ROW_COUNT() = 0 THEN
        SET v_job = NULL;
    END IF;
    SELECT v_job, v_by, v_at, v_until, v_live;
END
//
-- The paused jobs with the starts of their pauses (kind 0), each job's
-- latest ended pause (kind 1) and the live requests (kind 2), dropping
-- expired requests on the way.
CREATE PROCEDURE {{proc "ctl_state"}}()
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DELETE FROM {{.RunQueue}} WHERE until <= v_now;
    SELECT 0, job, '', '', {{us "paused_at"}}, NULL FROM {{.Paused}}
    UNION ALL
    SELECT 1, job, '', '', {{us "paused_at"}}, {{us "resumed_at"}} FROM {{.Resumed}}
    UNION ALL
    SELECT 2, job, id, requested_by, {{us "requested_at"}}, {{us "until"}} FROM {{.RunQueue}} WHERE until > v_now
    ORDER BY 1, 5, 2;
END
