-- Rate-limit state: one row per key and limit (lim is the limit's ID, the
-- algorithm and period, see ratewire.ID). a, b, c hold the algorithm's
-- integers, log the sliding log's admissions as a JSON array of [time,
-- units] pairs; all times are microseconds since the Unix epoch on the
-- server's clock. A row whose expires_at has passed no longer affects any
-- decision and may be deleted at any time; the decision procedure sweeps
-- them as it goes.
CREATE TABLE IF NOT EXISTS {{.Rates}} (
    rkey       VARBINARY(200) NOT NULL,
    lim        VARBINARY(32)  NOT NULL,
    a          BIGINT         NOT NULL DEFAULT 0,
    b          BIGINT         NOT NULL DEFAULT 0,
    c          BIGINT         NOT NULL DEFAULT 0,
    log        MEDIUMTEXT CHARACTER SET ascii COLLATE ascii_bin NULL,
    expires_at BIGINT         NOT NULL DEFAULT 0,
    PRIMARY KEY (rkey, lim),
    KEY expires (expires_at)
) ENGINE=InnoDB
//
-- <rate table>_lock(key, wait, lock) takes the named lock (GET_LOCK) of a
-- key: every decision and reset of the key holds it, and so does the sweep
-- while it deletes one of the key's rows, so that one decision's reads and
-- writes, separate statements in autocommit, are atomic with respect to
-- the others and to the sweep. Named locks are the server's: the name is
-- a hash, within GET_LOCK's 64 characters, of the database (a routine's
-- own), the table and the key. With a wait (seconds) it fails when the
-- lock stayed taken that long; with none, o_lock is NULL when the lock is
-- taken.
CREATE PROCEDURE {{rateProc "lock"}}(IN p_key VARBINARY(200), IN p_wait INT, OUT o_lock VARCHAR(64) CHARACTER SET ascii)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_name VARCHAR(64) CHARACTER SET ascii DEFAULT CONCAT('baton:', SHA1(CONCAT(DATABASE(), 0x00, '{{.Rates}}', 0x00, p_key)));
    DECLARE v_msg VARCHAR(64) CHARACTER SET ascii DEFAULT CONCAT('baton: the rate-limit key stayed locked for ', p_wait, 's');
    SET o_lock = NULL;
    IF COALESCE(GET_LOCK(v_name, p_wait), 0) = 1 THEN
        SET o_lock = v_name;
    ELSEIF p_wait > 0 THEN
        SIGNAL SQLSTATE 'HY000' SET MESSAGE_TEXT = v_msg;
    END IF;
END
//
-- ResetRate: every limit's state of a key removed, under the key's lock.
CREATE PROCEDURE {{rateProc "reset"}}(IN p_key VARBINARY(200))
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_lock VARCHAR(64) CHARACTER SET ascii DEFAULT NULL;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_lock IS NOT NULL THEN
            DO RELEASE_LOCK(v_lock);
        END IF;
        RESIGNAL;
    END;
    CALL {{rateProc "lock"}}(p_key, 10, v_lock);
    DELETE FROM {{.Rates}} WHERE rkey = p_key;
    DO RELEASE_LOCK(v_lock);
END
//
-- <rate table>_take(key, n, max delay µs, refund, limit ids (JSON array of
-- strings), 6 integers per limit (JSON array): algorithm, limit, period
-- µs, capacity, p, q with p/q the reduced emission interval) decides one
-- request and answers the text of {allowed, now µs, delay-or-retry µs,
-- then per limit remaining, retry µs, reset µs}, separated by spaces. The
-- same arithmetic as the memory provider's rate.go and the PostgreSQL
-- provider's function, in integers (the sliding window's estimate is the
-- one DOUBLE, computed as they do). DIV and MOD truncate as PostgreSQL's
-- bigint / and mod do; the floor and ceiling of a quotient that may be
-- negative are written out with them.
-- Under the key's lock, the clock is read after the lock is held, so it
-- is never older than the state the previous decision wrote.
CREATE PROCEDURE {{rateProc "take"}}(IN p_key VARBINARY(200), IN p_n BIGINT, IN p_maxd BIGINT, IN p_refund BOOLEAN,
    IN p_ids TEXT CHARACTER SET ascii, IN p_args TEXT CHARACTER SET ascii)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_lock VARCHAR(64) CHARACTER SET ascii DEFAULT NULL;
    DECLARE nk INT DEFAULT JSON_LENGTH(p_ids);
    DECLARE i, alg INT DEFAULT 0;
    DECLARE now_us, x, y, z, ex, di, dd, lm, per, cap, pp, qq, s, el, need, rem, rst, dt, tau, w, v_off, fq BIGINT DEFAULT 0;
    DECLARE est DOUBLE;
    DECLARE v_id VARCHAR(32) CHARACTER SET ascii;
    DECLARE v_log MEDIUMTEXT CHARACTER SET ascii;
    DECLARE v_allowed, v_charge BOOLEAN;
    DECLARE v_st TEXT CHARACTER SET ascii DEFAULT '';
    DECLARE v_res TEXT CHARACTER SET ascii DEFAULT '';
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_lock IS NOT NULL THEN
            DO RELEASE_LOCK(v_lock);
        END IF;
        RESIGNAL;
    END;
    CALL {{rateProc "lock"}}(p_key, 10, v_lock);
    SET now_us = {{us "UTC_TIMESTAMP(6)"}};

    WHILE i < nk DO
        SET v_id = JSON_UNQUOTE(JSON_EXTRACT(p_ids, CONCAT('$[', i, ']')));
        SET alg = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6, ']')) AS SIGNED),
            lm  = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 1, ']')) AS SIGNED),
            per = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 2, ']')) AS SIGNED),
            cap = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 3, ']')) AS SIGNED),
            pp  = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 4, ']')) AS SIGNED),
            qq  = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 5, ']')) AS SIGNED);
        SET x = 0, y = 0, z = 0, ex = 0, v_log = NULL, di = 0;
        SELECT t.a, t.b, t.c, t.expires_at, t.log INTO x, y, z, ex, v_log
        FROM {{.Rates}} t WHERE t.rkey = p_key AND t.lim = v_id FOR UPDATE;
        IF alg = 2 THEN
            SELECT COALESCE(SUM(j.u), 0) INTO x
            FROM JSON_TABLE(COALESCE(v_log, '[]'), '$[*]' COLUMNS (t BIGINT PATH '$[0]', u BIGINT PATH '$[1]')) j
            WHERE j.t > now_us - per;
            IF x + p_n > lm THEN
                SET v_off = x + p_n - lm - 1;
                SELECT q.t INTO y FROM (
                    SELECT j.t, SUM(j.u) OVER (ORDER BY j.t ROWS UNBOUNDED PRECEDING) AS cs
                    FROM JSON_TABLE(COALESCE(v_log, '[]'), '$[*]' COLUMNS (t BIGINT PATH '$[0]', u BIGINT PATH '$[1]')) j
                    WHERE j.t > now_us - per) q
                WHERE q.cs > v_off ORDER BY q.t LIMIT 1;
                SET di = GREATEST(1, y + per - now_us);
            END IF;
        ELSEIF alg = 5 THEN
            IF ex <= now_us OR x < now_us THEN SET x = now_us, y = 0; END IF;
            SET s = y + p_n * pp;
            SET di = GREATEST(0, x + s DIV qq - now_us - (cap * pp - MOD(s, qq)) DIV qq);
        ELSEIF alg = 4 THEN
            IF ex <= now_us THEN SET x = cap * pp, y = now_us; END IF;
            SET el = GREATEST(0, now_us - y);
            SET need = cap * pp - x;
            IF need <= 0 OR el >= (need + qq - 1) DIV qq THEN SET x = cap * pp; ELSE SET x = x + el * qq; END IF;
            IF x < p_n * pp THEN SET di = (p_n * pp - x + qq - 1) DIV qq; END IF;
        ELSEIF alg = 1 THEN
            SET w = now_us DIV per;
            IF ex <= now_us OR x < w THEN SET x = w, y = 0; END IF;
            IF y + p_n > lm THEN SET di = (x + 1) * per - now_us; END IF;
        ELSE
            SET w = now_us DIV per;
            IF ex <= now_us THEN SET x = w, y = 0, z = 0;
            ELSEIF x = w - 1 THEN SET x = w, z = y, y = 0;
            ELSEIF x < w - 1 THEN SET x = w, y = 0, z = 0;
            END IF;
            SET el = GREATEST(0, now_us - x * per);
            SET est = (z * 1e0) * ((per - el) * 1e0) / (per * 1e0);
            IF est + (y + p_n) * 1e0 > lm * 1e0 THEN
                IF y + p_n <= lm THEN
                    SET di = GREATEST(1, per - FLOOR((lm - y - p_n) * 1e0 * (per * 1e0) / (z * 1e0)) - el);
                ELSE
                    SET di = per - el;
                    IF y > 0 THEN
                        SET di = di + GREATEST(0, per - FLOOR((lm - p_n) * 1e0 * (per * 1e0) / (y * 1e0)));
                    END IF;
                END IF;
            END IF;
        END IF;
        SET v_st = CONCAT(v_st, IF(i > 0, ',', ''), '[', x, ',', y, ',', z, ',', di, ']');
        SET dd = GREATEST(dd, di);
        SET i = i + 1;
    END WHILE;
    SET v_st = CONCAT('[', v_st, ']');

    SET v_allowed = dd <= p_maxd;
    SET i = 0;
    WHILE i < nk DO
        IF CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6, ']')) AS SIGNED) = 4
            AND dd > 1125899906842624 DIV CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 5, ']')) AS SIGNED) THEN
            SET v_allowed = FALSE;
        END IF;
        SET i = i + 1;
    END WHILE;
    SET v_charge = v_allowed AND p_n > 0;
    IF p_refund THEN
        SET v_allowed = TRUE, v_charge = FALSE, dd = 0;
    END IF;
    SET v_res = CONCAT(IF(v_allowed, 1, 0), ' ', now_us, ' ', IF(p_n = 0, 0, dd));

    SET i = 0;
    WHILE i < nk DO
        SET v_id = JSON_UNQUOTE(JSON_EXTRACT(p_ids, CONCAT('$[', i, ']')));
        SET alg = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6, ']')) AS SIGNED),
            lm  = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 1, ']')) AS SIGNED),
            per = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 2, ']')) AS SIGNED),
            cap = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 3, ']')) AS SIGNED),
            pp  = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 4, ']')) AS SIGNED),
            qq  = CAST(JSON_EXTRACT(p_args, CONCAT('$[', i * 6 + 5, ']')) AS SIGNED);
        SET x  = CAST(JSON_EXTRACT(v_st, CONCAT('$[', i, '][0]')) AS SIGNED),
            y  = CAST(JSON_EXTRACT(v_st, CONCAT('$[', i, '][1]')) AS SIGNED),
            z  = CAST(JSON_EXTRACT(v_st, CONCAT('$[', i, '][2]')) AS SIGNED),
            di = CAST(JSON_EXTRACT(v_st, CONCAT('$[', i, '][3]')) AS SIGNED);
        SET rem = 0, rst = 0;
        IF alg = 5 THEN
            IF v_charge THEN
                IF x < now_us + dd THEN SET x = now_us + dd, y = 0; END IF;
                SET s = y + p_n * pp;
                SET x = x + s DIV qq, y = MOD(s, qq);
            ELSEIF p_refund THEN
                SET s = y - p_n * pp;
                -- floor(s / qq) for a negative s
                SET fq = IF(s >= 0, s DIV qq, -((-s + qq - 1) DIV qq));
                SET x = x + fq, y = s - qq * fq;
                IF x < now_us THEN SET x = now_us, y = 0; END IF;
            END IF;
            SET dt = x - now_us;
            SET tau = cap * pp;
            IF dt <= tau DIV qq + 1 THEN
                SET s = tau - dt * qq - y;
                SET rem = IF(s >= 0, s DIV pp, -((-s + pp - 1) DIV pp));
            END IF;
            SET rst = dt + IF(y > 0, 1, 0);
            IF v_charge OR p_refund THEN
                INSERT INTO {{.Rates}} (rkey, lim, a, b, expires_at) VALUES (p_key, v_id, x, y, now_us + rst)
                ON DUPLICATE KEY UPDATE a = x, b = y, expires_at = now_us + rst;
            END IF;
        ELSEIF alg = 4 THEN
            IF v_charge THEN
                SET x = LEAST(cap * pp - dd * qq, x) - p_n * pp;
            ELSEIF p_refund THEN
                SET x = LEAST(cap * pp, x + p_n * pp);
            END IF;
            SET rem = IF(x >= 0, x DIV pp, -((-x + pp - 1) DIV pp));
            SET s = cap * pp - x;
            SET rst = IF(s >= 0, (s + qq - 1) DIV qq, -((-s) DIV qq));
            IF v_charge OR p_refund THEN
                INSERT INTO {{.Rates}} (rkey, lim, a, b, expires_at) VALUES (p_key, v_id, x, now_us, now_us + rst)
                ON DUPLICATE KEY UPDATE a = x, b = now_us, expires_at = now_us + rst;
            END IF;
        ELSEIF alg = 1 THEN
            IF v_charge THEN
                SET y = y + p_n;
                INSERT INTO {{.Rates}} (rkey, lim, a, b, expires_at) VALUES (p_key, v_id, x, y, (x + 1) * per)
                ON DUPLICATE KEY UPDATE a = x, b = y, expires_at = (x + 1) * per;
            END IF;
            SET rem = lm - y;
            IF y > 0 THEN SET rst = (x + 1) * per - now_us; END IF;
        ELSEIF alg = 2 THEN
            SET v_log = NULL;
            SELECT t.log INTO v_log FROM {{.Rates}} t WHERE t.rkey = p_key AND t.lim = v_id;
            IF v_charge THEN
                SELECT JSON_ARRAYAGG(JSON_ARRAY(j.t, j.u)) INTO v_log
                FROM JSON_TABLE(COALESCE(v_log, '[]'), '$[*]' COLUMNS (t BIGINT PATH '$[0]', u BIGINT PATH '$[1]')) j
                WHERE j.t > now_us - per;
                SET v_log = IF(v_log IS NULL, JSON_ARRAY(JSON_ARRAY(now_us, p_n)),
                    JSON_ARRAY_APPEND(v_log, '$', JSON_ARRAY(now_us, p_n)));
                INSERT INTO {{.Rates}} (rkey, lim, log, expires_at) VALUES (p_key, v_id, v_log, now_us + per)
                ON DUPLICATE KEY UPDATE log = v_log, expires_at = now_us + per;
                SET x = x + p_n;
                SET rst = per;
            ELSEIF x > 0 THEN
                SELECT MAX(j.t) INTO y
                FROM JSON_TABLE(COALESCE(v_log, '[]'), '$[*]' COLUMNS (t BIGINT PATH '$[0]')) j;
                SET rst = GREATEST(0, y + per - now_us);
            END IF;
            SET rem = lm - x;
        ELSE
            SET el = GREATEST(0, now_us - x * per);
            IF v_charge THEN SET y = y + p_n; END IF;
            SET rem = FLOOR(lm * 1e0 - (z * 1e0) * ((per - el) * 1e0) / (per * 1e0) - y * 1e0);
            IF y > 0 THEN SET rst = 2 * per - el; ELSEIF z > 0 THEN SET rst = per - el; END IF;
            IF v_charge THEN
                INSERT INTO {{.Rates}} (rkey, lim, a, b, c, expires_at) VALUES (p_key, v_id, x, y, z, now_us + rst)
                ON DUPLICATE KEY UPDATE a = x, b = y, c = z, expires_at = now_us + rst;
            END IF;
        END IF;
        SET v_res = CONCAT(v_res, ' ', GREATEST(0, rem), ' ', di, ' ', rst);
        SET i = i + 1;
    END WHILE;

    -- Sweep: about one call in 64 deletes up to 512 expired rows, 8 per
    -- call on average, at least the rows a call can create, so the table
    -- stays bounded by the keys in use.
    IF RAND() < 1.0 / 64 THEN
        CALL {{rateProc "sweep"}}(now_us, 512, s);
    END IF;
    DO RELEASE_LOCK(v_lock);
    SELECT v_res;
END
//
-- Delete up to p_max rows that expired before p_now, each by its primary
-- key (a record lock, no range of gap locks that a concurrent insert could
-- deadlock on) and under its key's named lock, skipping keys whose lock or
-- row another session holds; o_n is how many. The key's lock keeps the
-- delete out of a decision in progress: one that had read its clock before
-- p_now and its rows after the delete would take the row's expiry for its
-- own and decide on an empty state too early. A decision that begins after
-- the delete reads a clock past p_now, where the row had expired anyway.
-- The caller's own key is locked already; GET_LOCK nests.
CREATE PROCEDURE {{rateProc "sweep"}}(IN p_now BIGINT, IN p_max INT, OUT o_n INT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_wait BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE v_key VARBINARY(200);
    DECLARE v_lim VARBINARY(32);
    DECLARE v_lock VARCHAR(64) CHARACTER SET ascii DEFAULT NULL;
    DECLARE v_n INT DEFAULT 0;
    DECLARE old CURSOR FOR
        SELECT rkey, lim FROM {{.Rates}} WHERE expires_at < p_now ORDER BY expires_at LIMIT p_max;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        IF v_lock IS NOT NULL THEN
            DO RELEASE_LOCK(v_lock);
        END IF;
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET SESSION innodb_lock_wait_timeout = 0;
    OPEN old;
    next_row: LOOP
        FETCH old INTO v_key, v_lim;
        IF v_done THEN
            LEAVE next_row;
        END IF;
        CALL {{rateProc "lock"}}(v_key, 0, v_lock);
        IF v_lock IS NOT NULL THEN
            BEGIN
                DECLARE CONTINUE HANDLER FOR 1205, 1213 BEGIN END;
                DELETE FROM {{.Rates}} WHERE rkey = v_key AND lim = v_lim AND expires_at < p_now;
                SET v_n = v_n + GREATEST(ROW_COUNT(), 0);
            END;
            DO RELEASE_LOCK(v_lock);
            SET v_lock = NULL;
        END IF;
    END LOOP;
    CLOSE old;
    SET SESSION innodb_lock_wait_timeout = v_wait;
    SET o_n = v_n;
END
//
-- SweepRates: one sweep of up to p_max rows, answering how many.
CREATE PROCEDURE {{rateProc "sweep_now"}}(IN p_max INT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_n INT DEFAULT 0;
    CALL {{rateProc "sweep"}}({{us "UTC_TIMESTAMP(6)"}}, p_max, v_n);
    SELECT v_n;
END
