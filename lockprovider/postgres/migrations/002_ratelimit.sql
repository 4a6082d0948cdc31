-- Rate-limit state: one row per key and limit (lim is the limit's ID, the
-- algorithm and period). a, b, c hold the algorithm's integers (see
-- ratelimit.go), log the sliding log's admission times; all times are
-- microseconds since the Unix epoch on the server's clock. A row whose
-- expires_at has passed no longer affects any decision and may be deleted
-- at any time; the decision function sweeps them as it goes.
-- UNLOGGED by default (Config.RateLogged): no WAL, not replicated, emptied
-- by crash recovery, which at worst hands out one fresh budget per key.
CREATE {{if not .RateLogged}}UNLOGGED {{end}}TABLE IF NOT EXISTS {{.Rates}} (
    key        text     NOT NULL,
    lim        text     NOT NULL,
    a          bigint   NOT NULL DEFAULT 0,
    b          bigint   NOT NULL DEFAULT 0,
    c          bigint   NOT NULL DEFAULT 0,
    log        bigint[],
    expires_at bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (key, lim)
) WITH (fillfactor = 70);

DO $migrate$
DECLARE
    rel regclass := '{{.Rates}}'::regclass;
    nsp text;
    tbl text;
BEGIN
    SELECT n.nspname, c.relname INTO nsp, tbl
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = rel;

    -- Follow Config.RateLogged when it changed since the table was made.
    IF (SELECT relpersistence FROM pg_class WHERE oid = rel) <> '{{if .RateLogged}}p{{else}}u{{end}}' THEN
        ALTER TABLE {{.Rates}} SET {{if .RateLogged}}LOGGED{{else}}UNLOGGED{{end}};
    END IF;

    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON {{.Rates}} (expires_at)', tbl || '_expires');

    -- <table>_take(key, n, max delay µs, refund, limit ids, 6 integers per
    -- limit: algorithm, limit, period µs, capacity, p, q with p/q the
    -- reduced emission interval) decides one request and returns
    -- {allowed, now µs, delay-or-retry µs, then per limit remaining, retry
    -- µs, reset µs}. The same arithmetic as the memory provider's rate.go
    -- and the Redis provider's rate.lua, in integers (the sliding window's
    -- estimate is the one float8, computed as they do).
    EXECUTE format($fmt$
CREATE OR REPLACE FUNCTION %I.%I(p_key text, p_n bigint, p_maxd bigint, p_refund boolean, p_ids text[], p_args bigint[])
RETURNS bigint[] LANGUAGE plpgsql AS $fn$
DECLARE
    nk int := cardinality(p_ids);
    now_us bigint;
    alg int[] := '{}';
    sa bigint[] := '{}';
    sb bigint[] := '{}';
    sc bigint[] := '{}';
    ex bigint[] := '{}';
    lg bigint[];
    d bigint[] := '{}';
    dd bigint := 0;
    di bigint;
    allowed boolean;
    charge boolean;
    res bigint[];
    r record;
    k int;
    o int;
    lm bigint; per bigint; cap bigint; pp bigint; qq bigint;
    x bigint; y bigint; z bigint;
    s bigint; el bigint; need bigint; rem bigint; rst bigint; dt bigint; tau bigint; w bigint;
    est float8;
BEGIN
    -- Lock (creating if missing) and read every row of the request in id
    -- order, so requests sharing limits never deadlock; then read the
    -- clock, so it is never older than the state written by whoever held
    -- the locks before.
    FOR o IN SELECT u.ord::int FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord) ORDER BY u.id LOOP
        SELECT t.a, t.b, t.c, t.expires_at INTO r FROM {{.Rates}} t WHERE t.key = p_key AND t.lim = p_ids[o] FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO {{.Rates}} (key, lim) VALUES (p_key, p_ids[o]) ON CONFLICT DO NOTHING;
            SELECT t.a, t.b, t.c, t.expires_at INTO r FROM {{.Rates}} t WHERE t.key = p_key AND t.lim = p_ids[o] FOR UPDATE;
        END IF;
        sa[o] := r.a; sb[o] := r.b; sc[o] := r.c; ex[o] := r.expires_at;
    END LOOP;
    now_us := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;

    FOR i IN 1 .. nk LOOP
        k := (i - 1) * 6;
        alg[i] := p_args[k + 1];
        lm := p_args[k + 2]; per := p_args[k + 3]; cap := p_args[k + 4]; pp := p_args[k + 5]; qq := p_args[k + 6];
        x := sa[i]; y := sb[i]; z := sc[i];
        di := 0;
        IF alg[i] = 2 THEN
            SELECT t.log INTO lg FROM {{.Rates}} t WHERE t.key = p_key AND t.lim = p_ids[i];
            SELECT count(*) INTO x FROM unnest(lg) u WHERE u > now_us - per;
            IF x + p_n > lm THEN
                SELECT u INTO y FROM unnest(lg) u WHERE u > now_us - per ORDER BY u OFFSET x + p_n - lm - 1 LIMIT 1;
                di := greatest(1, y + per - now_us);
            END IF;
        ELSIF alg[i] = 5 THEN
            IF ex[i] <= now_us OR x < now_us THEN x := now_us; y := 0; END IF;
            s := y + p_n * pp;
            di := greatest(0, x + s / qq - now_us - (cap * pp - mod(s, qq)) / qq);
        ELSIF alg[i] = 4 THEN
            IF ex[i] <= now_us THEN x := cap * pp; y := now_us; END IF;
            el := greatest(0, now_us - y);
            need := cap * pp - x;
            IF need <= 0 OR el >= (need + qq - 1) / qq THEN x := cap * pp; ELSE x := x + el * qq; END IF;
            IF x < p_n * pp THEN di := (p_n * pp - x + qq - 1) / qq; END IF;
        ELSIF alg[i] = 1 THEN
            w := now_us / per;
            IF ex[i] <= now_us OR x < w THEN x := w; y := 0; END IF;
            IF y + p_n > lm THEN di := (x + 1) * per - now_us; END IF;
        ELSE
            w := now_us / per;
            IF ex[i] <= now_us THEN x := w; y := 0; z := 0;
            ELSIF x = w - 1 THEN x := w; z := y; y := 0;
            ELSIF x < w - 1 THEN x := w; y := 0; z := 0;
            END IF;
            el := greatest(0, now_us - x * per);
            est := z::float8 * (per - el)::float8 / per::float8;
            IF est + (y + p_n)::float8 > lm::float8 THEN
                IF y + p_n <= lm THEN
                    di := greatest(1, per - floor((lm - y - p_n)::float8 * per::float8 / z::float8)::bigint - el);
                ELSE
                    di := per - el;
                    IF y > 0 THEN
                        di := di + greatest(0, per - floor((lm - p_n)::float8 * per::float8 / y::float8)::bigint);
                    END IF;
                END IF;
            END IF;
        END IF;
        sa[i] := x; sb[i] := y; sc[i] := z; d[i] := di;
        dd := greatest(dd, di);
    END LOOP;

    allowed := dd <= p_maxd;
    FOR i IN 1 .. nk LOOP
        IF alg[i] = 4 AND dd > 1125899906842624 / p_args[(i - 1) * 6 + 6] THEN
            allowed := false;
        END IF;
    END LOOP;
    charge := allowed AND p_n > 0;
    IF p_refund THEN allowed := true; charge := false; dd := 0; END IF;
    res := ARRAY[CASE WHEN allowed THEN 1 ELSE 0 END, now_us, CASE WHEN p_n = 0 THEN 0 ELSE dd END];

    FOR i IN 1 .. nk LOOP
        k := (i - 1) * 6;
        lm := p_args[k + 2]; per := p_args[k + 3]; cap := p_args[k + 4]; pp := p_args[k + 5]; qq := p_args[k + 6];
        x := sa[i]; y := sb[i]; z := sc[i];
        rem := 0; rst := 0;
        IF alg[i] = 5 THEN
            IF charge THEN
                IF x < now_us + dd THEN x := now_us + dd; y := 0; END IF;
                s := y + p_n * pp;
                x := x + s / qq; y := mod(s, qq);
            ELSIF p_refund THEN
                s := y - p_n * pp;
                x := x + floor(s::numeric / qq)::bigint;
                y := s - qq * floor(s::numeric / qq)::bigint;
                IF x < now_us THEN x := now_us; y := 0; END IF;
            END IF;
            dt := x - now_us;
            tau := cap * pp;
            IF dt <= tau / qq + 1 THEN rem := floor((tau - dt * qq - y)::numeric / pp)::bigint; END IF;
            rst := dt + CASE WHEN y > 0 THEN 1 ELSE 0 END;
            IF charge OR p_refund THEN
                UPDATE {{.Rates}} SET a = x, b = y, expires_at = now_us + rst WHERE key = p_key AND lim = p_ids[i];
            END IF;
        ELSIF alg[i] = 4 THEN
            IF charge THEN
                x := least(cap * pp - dd * qq, x) - p_n * pp;
            ELSIF p_refund THEN
                x := least(cap * pp, x + p_n * pp);
            END IF;
            rem := floor(x::numeric / pp)::bigint;
            rst := ceil((cap * pp - x)::numeric / qq)::bigint;
            IF charge OR p_refund THEN
                UPDATE {{.Rates}} SET a = x, b = now_us, expires_at = now_us + rst WHERE key = p_key AND lim = p_ids[i];
            END IF;
        ELSIF alg[i] = 1 THEN
            IF charge THEN
                y := y + p_n;
                UPDATE {{.Rates}} SET a = x, b = y, expires_at = (x + 1) * per WHERE key = p_key AND lim = p_ids[i];
            END IF;
            rem := lm - y;
            IF y > 0 THEN rst := (x + 1) * per - now_us; END IF;
        ELSIF alg[i] = 2 THEN
            IF charge THEN
                UPDATE {{.Rates}} t SET log = ARRAY(SELECT u FROM unnest(t.log) u WHERE u > now_us - per ORDER BY u) || array_fill(now_us, ARRAY[p_n::int]),
                    expires_at = now_us + per
                WHERE t.key = p_key AND t.lim = p_ids[i];
                x := x + p_n;
                rst := per;
            ELSIF x > 0 THEN
                SELECT max(u) INTO y FROM {{.Rates}} t, unnest(t.log) u WHERE t.key = p_key AND t.lim = p_ids[i];
                rst := greatest(0, y + per - now_us);
            END IF;
            rem := lm - x;
        ELSE
            el := greatest(0, now_us - x * per);
            IF charge THEN y := y + p_n; END IF;
            rem := floor(lm::float8 - z::float8 * (per - el)::float8 / per::float8 - y::float8)::bigint;
            IF y > 0 THEN rst := 2 * per - el; ELSIF z > 0 THEN rst := per - el; END IF;
            IF charge THEN
                UPDATE {{.Rates}} SET a = x, b = y, c = z, expires_at = now_us + rst WHERE key = p_key AND lim = p_ids[i];
            END IF;
        END IF;
        res := res || ARRAY[greatest(0, rem), d[i], rst];
    END LOOP;

    -- Sweep: about one call in 256 deletes up to 2048 expired rows, 8 per
    -- call on average, at least the rows a call can create, so the table
    -- stays bounded by the keys in use. Rows other sessions hold are
    -- skipped.
    IF random() < 1.0 / 256 THEN
        DELETE FROM {{.Rates}} WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM {{.Rates}} WHERE expires_at < now_us ORDER BY expires_at LIMIT 2048 FOR UPDATE SKIP LOCKED));
    END IF;
    RETURN res;
END
$fn$
$fmt$, nsp, tbl || '_take');
END
$migrate$;
