-- Rate-limit rows whose state is live (expires_at in µs since the epoch).
SELECT r.key, r.lim, r.expires_at
FROM {{.Rates}} r
WHERE r.expires_at > (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
ORDER BY r.key, r.lim
