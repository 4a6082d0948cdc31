package ratelimit

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
)

// KeyFunc derives the rate-limit key of a request. An error rejects the
// request with 400 Bad Request.
type KeyFunc func(r *http.Request) (string, error)

// ErrNoKey is returned by the KeyFuncs of this package when the request
// carries nothing to key on.
var ErrNoKey = errors.New("ratelimit: request has no rate-limit key")

// RemoteIP keys by the address of the peer (http.Request.RemoteAddr without
// the port). Behind a proxy that is the proxy's address; use HeaderKey
// with the header your proxy sets, and make sure clients cannot set it.
func RemoteIP(r *http.Request) (string, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if host == "" {
		return "", ErrNoKey
	}
	return host, nil
}

// HeaderKey keys by the value of a request header, e.g. a client id header.
// A request without it gets ErrNoKey. The value is stored and logged as the
// key: for a secret (an API key), key by a digest of it in a KeyFunc of
// your own instead.
func HeaderKey(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		if v := r.Header.Get(name); v != "" {
			return v, nil
		}
		return "", ErrNoKey
	}
}

// MiddlewareConfig configures Middleware. The zero value (or a nil
// *MiddlewareConfig) keys by RemoteIP, charges 1 per request and fails
// closed.
type MiddlewareConfig struct {
	// Key derives the key; nil means RemoteIP.
	Key KeyFunc
	// Cost is the units a request costs; nil means 1. A cost the Limiter
	// rejects (negative, or above a limit's capacity) answers 400 Bad
	// Request. A cost of 0 is a peek: the request passes uncharged even
	// when the limit is exhausted.
	Cost func(r *http.Request) int64
	// FailOpen lets requests through when the provider fails (errors or
	// times out). False (the default) answers 503 Service Unavailable
	// instead, which suits login or payment endpoints.
	FailOpen bool
	// OnError, if set, is called for every provider failure (count them:
	// while the provider is down, requests pass unlimited or are refused).
	// The Limiter's observer (ratelimit.Config.Observer) is told too, with
	// an observe.RateFallback event. Nil means none is called.
	OnError func(r *http.Request, err error)
	// Denied writes the response to a refused request after the rate-limit
	// header fields are set. Nil means a plain-text 429 Too Many Requests.
	Denied http.Handler
	// Logger receives a warning for every provider failure. Nil discards.
	Logger *slog.Logger
}

// Middleware limits an http.Handler with l, one decision per request.
//
// Every decided response carries the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers (structured-field lists, one item per
// limit):
//
//	RateLimit-Policy: "100-per-1m";q=100;w=60
//	RateLimit: "100-per-1m";r=41;t=37
//
// q is the limit's capacity, w its period in seconds (omitted when not a
// whole number of seconds; TokenBucket and GCRA add baton-rate and
// baton-burst), r the units remaining, and t the seconds (rounded up) until
// the limit gives quota back: for a limit that refused the request, when it
// would pass; otherwise when the limit is full again. A refused request gets
// 429 Too Many Requests with Retry-After in whole seconds, rounded up so a
// client that waits exactly that long is not refused again.
//
// A key error answers 400 Bad Request, as does a key the provider rejects
// (empty, longer than 200 bytes, not UTF-8, control characters) or a cost
// it rejects (negative, or above a limit's capacity); a cost of 0 passes
// uncharged.
// A provider failure is logged, passed to OnError, and then let through
// (FailOpen) or answered with 503 and Retry-After: 1. Neither the 400 nor
// the failure responses carry the rate-limit fields.
//
// A nil or zero l (one not made by New) cannot decide anything: every
// request is then handled as a provider failure with ErrNilProvider
// (logged, passed to OnError, let through or answered 503), never a panic.
func Middleware(l *Limiter, config *MiddlewareConfig) func(http.Handler) http.Handler {
	var cfg MiddlewareConfig // nil config: the zero value's defaults
	if config != nil {
		cfg = *config
	}
	key := cfg.Key
	if key == nil {
		key = RemoteIP
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	denied := cfg.Denied
	if denied == nil {
		denied = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		})
	}
	policy := policyField(l.Limits())
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k, err := key(r)
			if err != nil {
				http.Error(w, "rate limit: "+err.Error(), http.StatusBadRequest)
				return
			}
			n := int64(1)
			if cfg.Cost != nil {
				n = cfg.Cost(r)
			}
			res, err := l.AllowN(r.Context(), k, n)
			if err != nil {
				if errors.Is(err, batontype.ErrInvalid) && err != ErrNilProvider {
					http.Error(w, "rate limit: invalid key or cost", http.StatusBadRequest)
					return
				}
				logger.WarnContext(r.Context(), "rate limit provider failed", "fail_open", cfg.FailOpen, "err", err)
				if cfg.OnError != nil {
					cfg.OnError(r, err)
				}
				l.fellBack(r.Context(), cfg.FailOpen, err)
				if cfg.FailOpen {
					next.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Retry-After", unavailableRetryAfter)
				http.Error(w, "rate limiter unavailable", http.StatusServiceUnavailable)
				return
			}
			h := w.Header()
			h.Set("RateLimit-Policy", policy)
			h.Set("RateLimit", limitField(res))
			if !res.Allowed {
				h.Set("Retry-After", strconv.FormatInt(ceilSeconds(res.RetryAfter), 10))
				denied.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// unavailableRetryAfter is the Retry-After, in seconds, of the 503 answered
// when the provider fails and FailOpen is off: soon, since outages are
// usually short, without inviting a tight retry loop.
const unavailableRetryAfter = "1"

// ceilSeconds rounds d up to whole seconds, at least 1 for a positive d.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// policyField renders RateLimit-Policy.
func policyField(limits []Limit) string {
	var b strings.Builder
	for i, l := range limits {
		if i > 0 {
			b.WriteString(", ")
		}
		writeSFString(&b, l.policyName())
		b.WriteString(";q=")
		b.WriteString(strconv.FormatInt(l.Capacity(), 10))
		if l.Period%time.Second == 0 {
			b.WriteString(";w=")
			b.WriteString(strconv.FormatInt(int64(l.Period/time.Second), 10))
		}
		if l.Algorithm.Reservable() {
			// Vendor parameters: a bucket refills continuously at Rate per
			// Period and holds Burst.
			b.WriteString(";baton-rate=")
			b.WriteString(strconv.FormatInt(l.Rate, 10))
			b.WriteString(";baton-burst=")
			b.WriteString(strconv.FormatInt(l.Capacity(), 10))
		}
	}
	return b.String()
}

// limitField renders RateLimit for a result.
func limitField(res Result) string {
	var b strings.Builder
	for i, s := range res.States {
		if i > 0 {
			b.WriteString(", ")
		}
		writeSFString(&b, s.Limit.policyName())
		b.WriteString(";r=")
		b.WriteString(strconv.FormatInt(s.Remaining, 10))
		t := s.ResetAfter
		if s.RetryAfter > 0 {
			t = s.RetryAfter
		}
		b.WriteString(";t=")
		b.WriteString(strconv.FormatInt(ceilSeconds(t), 10))
	}
	return b.String()
}

// writeSFString writes an RFC 8941 sf-string (names are printable ASCII,
// checked by New).
func writeSFString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}
