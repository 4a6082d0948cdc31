-- AcquireBatch and AcquireRunBatch (p_ledger): acq for each item of
-- p_items, a JSON array of [name, owner, locked_by, at_most µs,
-- at_least µs, tick µs or null], in name order (so that two batches in
-- callers' transactions never wait on each other in a cycle), with the
-- ledger's run_open for each grant when p_ledger. The answer is one text
-- of a line per item: its position in p_items, then acq's answers
-- (mine, now, granted at, until, at least until, fence, tick; "-" for
-- NULL, as for an item refused by error 1205 or 1213), separated by
-- spaces.
CREATE PROCEDURE {{proc "acquire_batch"}}(IN p_items LONGTEXT CHARACTER SET utf8mb4, IN p_ledger BOOLEAN,
    IN p_catch_up BOOLEAN, IN p_manual BOOLEAN, IN p_max BIGINT, IN p_max_age BIGINT)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_wait BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE v_ord, v_most, v_least_for, v_ptick BIGINT;
    DECLARE v_name VARCHAR(200) CHARACTER SET utf8mb4;
    DECLARE v_owner VARCHAR(64) CHARACTER SET utf8mb4;
    DECLARE v_by VARCHAR(255) CHARACTER SET utf8mb4;
    DECLARE v_granted, v_mine BOOLEAN;
    DECLARE v_now, v_at, v_until, v_least, v_fence, v_tick BIGINT;
    DECLARE v_out LONGTEXT CHARACTER SET ascii DEFAULT '';
    DECLARE items CURSOR FOR
        SELECT j.ord, j.name, j.owner, j.locked_by, j.most, j.least_for, j.tick
        FROM JSON_TABLE(p_items, '$[*]' COLUMNS (
            ord       FOR ORDINALITY,
            name      VARCHAR(200) CHARACTER SET utf8mb4 PATH '$[0]',
            owner     VARCHAR(64)  CHARACTER SET utf8mb4 PATH '$[1]',
            locked_by VARCHAR(255) CHARACTER SET utf8mb4 PATH '$[2]',
            most      BIGINT PATH '$[3]',
            least_for BIGINT PATH '$[4]',
            tick      BIGINT PATH '$[5]')) j
        ORDER BY CAST(j.name AS BINARY);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
        SET SESSION innodb_lock_wait_timeout = v_wait;
        RESIGNAL;
    END;
    SET SESSION innodb_lock_wait_timeout = 0;
    OPEN items;
    next_item: LOOP
        FETCH items INTO v_ord, v_name, v_owner, v_by, v_most, v_least_for, v_ptick;
        IF v_done THEN
            LEAVE next_item;
        END IF;
        BEGIN
            -- A row another session's transaction holds refuses this item
            -- alone, as acquire's 1205 does; the others proceed.
            DECLARE CONTINUE HANDLER FOR 1205, 1213
                SET v_granted = FALSE, v_mine = FALSE, v_now = NULL, v_at = NULL, v_until = NULL, v_least = NULL,
                    v_fence = NULL, v_tick = NULL;
            CALL {{proc "acq"}}(CAST(v_name AS BINARY), CAST(v_owner AS BINARY), v_by, v_most, v_least_for, v_ptick,
                v_granted, v_now, v_mine, v_at, v_until, v_least, v_fence, v_tick);
        END;
        IF p_ledger AND v_granted AND v_mine THEN
            CALL {{proc "run_open"}}(CAST(v_name AS BINARY), v_fence, v_ptick, v_by, v_at, p_catch_up, p_manual, p_max, p_max_age);
        END IF;
        -- Every value goes through IFNULL: one NULL would make CONCAT,
        -- and so the whole answer, NULL.
        SET v_out = CONCAT(v_out, v_ord, ' ', IF(v_mine, 1, 0), ' ', IFNULL(v_now, '-'), ' ', IFNULL(v_at, '-'), ' ',
            IFNULL(v_until, '-'), ' ', IFNULL(v_least, '-'), ' ', IFNULL(v_fence, '-'), ' ', IFNULL(v_tick, '-'), '\n');
    END LOOP;
    CLOSE items;
    SET SESSION innodb_lock_wait_timeout = v_wait;
    SELECT v_out;
END
//
-- ReleaseBatch and ReleaseRunBatch (p_ledger): rel for each item of
-- p_items, a JSON array of [name, owner, token, outcome, error,
-- elapsed µs, stack] (the last five only with p_ledger), with the ledger's
-- run_close for each item when p_ledger. The answer is the text of the
-- positions (in p_items) of the items whose owner held the lease,
-- separated by spaces.
CREATE PROCEDURE {{proc "release_batch"}}(IN p_items LONGTEXT CHARACTER SET utf8mb4, IN p_ledger BOOLEAN)
    SQL SECURITY INVOKER
BEGIN
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE v_ord, v_token, v_elapsed BIGINT;
    DECLARE v_name VARCHAR(200) CHARACTER SET utf8mb4;
    DECLARE v_owner VARCHAR(64) CHARACTER SET utf8mb4;
    DECLARE v_outcome VARCHAR(32) CHARACTER SET utf8mb4;
    DECLARE v_error VARCHAR(1024) CHARACTER SET utf8mb4;
    DECLARE v_stack VARCHAR(8192) CHARACTER SET utf8mb4;
    DECLARE v_held BOOLEAN;
    DECLARE v_out LONGTEXT CHARACTER SET ascii DEFAULT '';
    DECLARE items CURSOR FOR
        SELECT j.ord, j.name, j.owner, j.token, j.outcome, j.error, j.elapsed, j.stack
        FROM JSON_TABLE(p_items, '$[*]' COLUMNS (
            ord     FOR ORDINALITY,
            name    VARCHAR(200)  CHARACTER SET utf8mb4 PATH '$[0]',
            owner   VARCHAR(64)   CHARACTER SET utf8mb4 PATH '$[1]',
            token   BIGINT PATH '$[2]',
            outcome VARCHAR(32)   CHARACTER SET utf8mb4 PATH '$[3]',
            error   VARCHAR(1024) CHARACTER SET utf8mb4 PATH '$[4]',
            elapsed BIGINT PATH '$[5]',
            stack   VARCHAR(8192) CHARACTER SET utf8mb4 PATH '$[6]')) j
        ORDER BY CAST(j.name AS BINARY);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    OPEN items;
    next_item: LOOP
        FETCH items INTO v_ord, v_name, v_owner, v_token, v_outcome, v_error, v_elapsed, v_stack;
        IF v_done THEN
            LEAVE next_item;
        END IF;
        CALL {{proc "rel"}}(CAST(v_name AS BINARY), CAST(v_owner AS BINARY), v_held);
        IF p_ledger THEN
            CALL {{proc "run_close"}}(CAST(v_name AS BINARY), v_token, v_outcome, v_error, v_elapsed, IFNULL(v_stack, ''));
        END IF;
        IF v_held THEN
            SET v_out = CONCAT(v_out, v_ord, ' ');
        END IF;
    END LOOP;
    CLOSE items;
    SELECT v_out;
END
