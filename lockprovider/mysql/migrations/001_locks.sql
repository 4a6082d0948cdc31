-- The lease table: one row per lock name, never deleted by baton, so the
-- fence column keeps increasing across release, expiry and takeover.
-- released_at is the time of the last release: every release writes it,
-- so a release that matches a lease always changes its row, and the
-- count of changed rows says whether the owner held it whether or not the
-- client set CLIENT_FOUND_ROWS (see Provider.Release). The releases
-- column, which waiting providers poll, is added by 007_release_count.sql.
-- Names are VARBINARY: compared byte by byte, with no collation and no
-- trailing-space padding ('a' and 'a ' are two names). Times are
-- DATETIME(6) in UTC, written from UTC_TIMESTAMP(6): no conversion through
-- the session's time zone, no 2038 limit and none of the implicit defaults
-- a TIMESTAMP column gets on servers with explicit_defaults_for_timestamp
-- off (MariaDB's default).
CREATE TABLE IF NOT EXISTS {{.Locks}} (
    name           VARBINARY(200) NOT NULL,
    owner          VARBINARY(64)  NOT NULL,
    locked_by      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    locked_at      DATETIME(6)    NOT NULL,
    lock_until     DATETIME(6)    NOT NULL,
    at_least_until DATETIME(6)    NOT NULL,
    fence          BIGINT         NOT NULL,
    last_tick      DATETIME(6)    NULL,
    released_at    DATETIME(6)    NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB
//
-- Counters of announcements that are no lease release: one row, with a
-- name no lock can have (it starts with a control character), counts the
-- control changes (see WatchControl), polled with the lease rows'
-- releases counters. until and the rows of lock names are no longer
-- written (releases are counted in the lease row, 007_release_count.sql).
CREATE TABLE IF NOT EXISTS {{.Waiters}} (
    name     VARBINARY(200) NOT NULL,
    until    DATETIME(6)    NOT NULL,
    released BIGINT         NOT NULL DEFAULT 0,
    PRIMARY KEY (name)
) ENGINE=InnoDB
//
-- The grant, shared by every acquiring procedure (acquire, acquire_run,
-- acquire_batch), so the lease logic exists once. Every statement of a
-- procedure is its own transaction in autocommit (no procedure here
-- starts one: START TRANSACTION would commit a caller's), so each step is
-- one atomic statement:
--   v_now       reads the server clock. UTC_TIMESTAMP(6) is the time of
--               the statement that reads it, never the start of a
--               transaction, and needs no time zone;
--   the probe   reads the row without a lock (a consistent read): a claim
--               that cannot win (a lease still held, a stale tick) takes
--               no row lock, so it never makes a claim that would win fail
--               on the cut lock wait;
--   the UPDATE  takes over an ended lease (and a newer tick), bumping the
--               fence under the row lock to at least the server time in
--               microseconds, so tokens increase even if an operator
--               deleted the row;
--   the INSERT  creates the row of a name never seen (IGNORE: a concurrent
--               insert of the same name wins, and this claim is refused);
--   the SELECT  reports the row, from which the caller tells a grant (its
--               owner, live), a lease held by another and a stale tick
--               apart. A repeated Acquire by the holder changes nothing
--               and reads the same grant.
-- The callers cut the session's lock wait (see acquire), so a contender
-- fails fast with error 1205 instead of queueing behind another session's
-- open transaction. o_granted says whether this call granted (for the
-- ledger's run row); o_mine whether the row is a live lease of p_owner.
-- p_most, p_least are microseconds; p_tick microseconds since the Unix
-- epoch, NULL for none. The o_ times are microseconds since the epoch.
CREATE PROCEDURE {{proc "acq"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64),
    IN p_by VARCHAR(255) CHARACTER SET utf8mb4, IN p_most BIGINT, IN p_least BIGINT, IN p_tick BIGINT,
    OUT o_granted BOOLEAN, OUT o_now BIGINT, OUT o_mine BOOLEAN, OUT o_at BIGINT, OUT o_until BIGINT,
    OUT o_least BIGINT, OUT o_fence BIGINT, OUT o_tick BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE v_tick DATETIME(6) DEFAULT {{dt "p_tick"}};
    DECLARE v_exists, v_open BOOLEAN DEFAULT FALSE;
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    SET o_granted = FALSE;
    SELECT TRUE, lock_until <= v_now AND (v_tick IS NULL OR last_tick IS NULL OR last_tick < v_tick)
    INTO v_exists, v_open
    FROM {{.Locks}} WHERE name = p_name;
    IF v_open THEN
        UPDATE {{.Locks}} SET
            owner          = p_owner,
            locked_by      = p_by,
            locked_at      = v_now,
            lock_until     = v_now + INTERVAL p_most MICROSECOND,
            at_least_until = v_now + INTERVAL p_least MICROSECOND,
            fence          = GREATEST(fence + 1, {{us "v_now"}}),
            last_tick      = COALESCE(v_tick, last_tick)
        WHERE name = p_name AND lock_until <= v_now
          AND (v_tick IS NULL OR last_tick IS NULL OR last_tick < v_tick);
        SET o_granted = ROW_COUNT() > 0;
    ELSEIF NOT v_exists THEN
        INSERT IGNORE INTO {{.Locks}} (name, owner, locked_by, locked_at, lock_until, at_least_until, fence, last_tick)
        VALUES (p_name, p_owner, p_by, v_now, v_now + INTERVAL p_most MICROSECOND,
            v_now + INTERVAL p_least MICROSECOND, {{us "v_now"}}, v_tick);
        SET o_granted = ROW_COUNT() > 0;
    END IF;
    SET o_now = {{us "v_now"}}, o_mine = FALSE, o_at = NULL, o_until = NULL, o_least = NULL, o_fence = NULL, o_tick = NULL;
    SELECT owner = p_owner AND lock_until > v_now, {{us "locked_at"}}, {{us "lock_until"}}, {{us "at_least_until"}},
        fence, {{us "last_tick"}}
    INTO o_mine, o_at, o_until, o_least, o_fence, o_tick
    FROM {{.Locks}} WHERE name = p_name;
END
//
-- Acquire: one CALL of acq. The lock wait is cut to nothing (MariaDB;
-- MySQL's minimum is 1s) for the call and restored after, also on an
-- error: NOWAIT is not allowed in a MariaDB procedure.
CREATE PROCEDURE {{proc "acquire"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64),
    IN p_by VARCHAR(255) CHARACTER SET utf8mb4, IN p_most BIGINT, IN p_least BIGINT, IN p_tick BIGINT)
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
    SELECT v_now, v_mine, v_at, v_until, v_least, v_fence, v_tick;
END
//
-- Acquire without a tick: the lean form of acquire for the plain lock
-- path, one INSERT … ON DUPLICATE KEY UPDATE and one read. The upsert
-- inserts a fresh row or takes over an ended lease, bumping the fence
-- under the row lock as acq does; a live lease (the caller's own
-- included: a repeated Acquire reads the same grant) keeps every value.
-- lock_until is assigned last because each assignment of the UPDATE part
-- sees the new values of those before it: every condition must read the
-- old lock_until. The lock wait is cut as in acquire.
CREATE PROCEDURE {{proc "acquire_fast"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64),
    IN p_by VARCHAR(255) CHARACTER SET utf8mb4, IN p_most BIGINT, IN p_least BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_wait BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET SESSION innodb_lock_wait_timeout = 0;
    INSERT INTO {{.Locks}} (name, owner, locked_by, locked_at, lock_until, at_least_until, fence)
    VALUES (p_name, p_owner, p_by, v_now, v_now + INTERVAL p_most MICROSECOND,
        v_now + INTERVAL p_least MICROSECOND, {{us "v_now"}})
    ON DUPLICATE KEY UPDATE
        owner          = IF(lock_until <= v_now, p_owner, owner),
        locked_by      = IF(lock_until <= v_now, p_by, locked_by),
        locked_at      = IF(lock_until <= v_now, v_now, locked_at),
        at_least_until = IF(lock_until <= v_now, v_now + INTERVAL p_least MICROSECOND, at_least_until),
        fence          = IF(lock_until <= v_now, GREATEST(fence + 1, {{us "v_now"}}), fence),
        lock_until     = IF(lock_until <= v_now, v_now + INTERVAL p_most MICROSECOND, lock_until);
    SET SESSION innodb_lock_wait_timeout = v_wait;
    SELECT {{us "v_now"}}, owner = p_owner AND lock_until > v_now, {{us "locked_at"}}, {{us "lock_until"}},
        {{us "at_least_until"}}, fence, NULL
    FROM {{.Locks}} WHERE name = p_name;
END
//
-- Extend: one UPDATE of a live lease held by the owner, then the row if it
-- is still what the UPDATE wrote. The two statements are not atomic: a
-- force-release between them ends the lease (lock_until moves), and the
-- extension is then reported as not held, never as a grant ending at the
-- force-release. The new end lies after v_now, so a lease the UPDATE did
-- not change never matches. The UPDATE checks liveness at rowNow, when
-- the row is locked: one that waited behind a force-release or a release
-- must find the lease ended, not revive it.
CREATE PROCEDURE {{proc "extend"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64),
    IN p_most BIGINT, IN p_least BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    UPDATE {{.Locks}} SET
        lock_until     = v_now + INTERVAL p_most MICROSECOND,
        at_least_until = v_now + INTERVAL p_least MICROSECOND
    WHERE name = p_name AND owner = p_owner AND lock_until > {{rowNow}};
    SELECT {{us "locked_at"}}, {{us "lock_until"}}, {{us "at_least_until"}}, fence, {{us "last_tick"}}
    FROM {{.Locks}}
    WHERE name = p_name AND owner = p_owner AND lock_until = v_now + INTERVAL p_most MICROSECOND;
END
//
-- The release, shared by release_run and release_batch: the lease ends
-- now, or at its at_least_until bound if that lies ahead. o_held says
-- whether the owner held the lease (released_at changes on every match,
-- so ROW_COUNT() counts it whatever CLIENT_FOUND_ROWS says). A lease that
-- ends now counts in releases, which waiting providers poll (see
-- NotifyRelease); releases is assigned first, so it reads the old
-- lock_until's bound. Release itself is the same UPDATE as one plain
-- statement (see Provider.Release).
CREATE PROCEDURE {{proc "rel"}}(IN p_name VARBINARY(200), IN p_owner VARBINARY(64), OUT o_held BOOLEAN)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
    UPDATE {{.Locks}} SET releases = releases + (at_least_until <= v_now),
        lock_until = GREATEST(v_now, at_least_until), released_at = v_now
    WHERE name = p_name AND owner = p_owner AND lock_until > {{rowNow}};
    SET o_held = ROW_COUNT() > 0;
END
