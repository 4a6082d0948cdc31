-- The types of lock_until and locked_at, and whether the extra columns
-- exist. $1 the quoted, qualified table name.
SELECT a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_attribute a
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
