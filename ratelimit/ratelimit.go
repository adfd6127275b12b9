// Package ratelimit enforces the request limits of spec section 8 with
// httprate's sliding-window counters: in process memory, or in Redis
// (httprate-redis) so that every instance shares them. A refused request
// gets 429 rate_limit_exceeded with a Retry-After that says when the window
// frees a slot, and every answer carries X-RateLimit-* and the IETF
// RateLimit / RateLimit-Policy headers.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/go-chi/httprate"
	httprateredis "github.com/go-chi/httprate-redis"
	"github.com/redis/go-redis/v9"
)

// Limiter allows at most Limit requests per Window for each key.
type Limiter struct {
	// Name names the policy in RateLimit-Policy ("app", "checkout", "auth").
	Name    string
	Limit   int
	Window  time.Duration
	counter httprate.LimitCounter
	// redis, when set, is where counter keeps its counts; Fail counts there
	// in one transaction.
	redis redis.UniversalClient
	now   func() time.Time
	log   *slog.Logger
	// mu makes Allow's read-then-count one step on this instance, and Fail's
	// count-then-read when counting in memory.
	mu sync.Mutex
	// The header values that never change, written once: the quoted
	// policy name, and the RateLimit-Policy and X-RateLimit-Limit values.
	quoted              string
	policyHdr, limitHdr []string
}

// Store makes the counters of limiters: in memory, or in Redis.
type Store struct {
	redis redis.UniversalClient
	log   *slog.Logger
	// Now is the clock (tests move it); time.Now when nil.
	Now func() time.Time
}

// NewStore returns counters in Redis when redisURL is set, in memory
// otherwise. Redis that cannot be reached at start is an error; later
// outages fall back to in-memory counting (httprate-redis) and are logged.
func NewStore(ctx context.Context, redisURL string, log *slog.Logger) (*Store, error) {
	s := &Store{log: log}
	if redisURL == "" {
		return s, nil
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// A Redis that is down refuses the dial at once; these bound one that
	// hangs. A read that times out may still have counted, and the memory
	// fallback then counts again, so they are generous enough that a busy
	// machine does not time out a live Redis (250 ms did, under a
	// 600-request burst on 2 loaded cores).
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 500*time.Millisecond, time.Second, time.Second
	opts.MaxRetries = -1 // fail fast so the in-memory fallback takes over
	client := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("REDIS_URL: cannot reach Redis: %w", err)
	}
	s.redis = client
	return s, nil
}

// Shared reports whether the counters are shared through Redis.
func (s *Store) Shared() bool { return s.redis != nil }

// Close releases the Redis connection.
func (s *Store) Close() error {
	if s.redis != nil {
		return s.redis.Close()
	}
	return nil
}

// New returns a limiter of limit requests per window.
func (s *Store) New(name string, limit int, window time.Duration) *Limiter {
	l := &Limiter{Name: name, Limit: limit, Window: window, now: s.Now, log: s.log}
	l.quoted = strconv.Quote(name[strings.LastIndexByte(name, ':')+1:])
	l.policyHdr = []string{l.quoted + ";q=" + strconv.Itoa(limit) + ";w=" + strconv.Itoa(int(window.Seconds()))}
	l.limitHdr = []string{strconv.Itoa(limit)}
	if l.now == nil {
		l.now = time.Now
	}
	if s.redis != nil {
		l.redis = s.redis
		l.counter = httprateredis.NewCounter(&httprateredis.Config{
			Client: s.redis, PrefixKey: name, WindowLength: window,
			OnError: func(err error) { s.log.Warn("rate limit counter in Redis failed; counting in memory", "error", err) },
		})
	} else {
		l.counter = httprate.NewLocalLimitCounter(window)
	}
	l.counter.Config(limit, window)
	return l
}

// state is a key's position in the sliding window at one instant.
type state struct {
	curr, prev int
	start      time.Time // start of the current window
	now        time.Time
}

// rate is httprate's sliding-window estimate of requests in the last window.
func (l *Limiter) rate(s state) float64 {
	elapsed := s.now.Sub(s.start)
	return float64(s.prev)*float64(l.Window-elapsed)/float64(l.Window) + float64(s.curr)
}

func (l *Limiter) read(key string) (state, error) {
	now := l.now().UTC()
	start := now.Truncate(l.Window)
	curr, prev, err := l.counter.Get(key, start, start.Add(-l.Window))
	return state{curr: curr, prev: prev, start: start, now: now}, err
}

// retryAfter is how long until one more request fits: the previous
// window's weight fades linearly, and at the next boundary the current
// window becomes the previous one.
func (l *Limiter) retryAfter(s state) time.Duration {
	room := float64(l.Limit - 1)
	left := l.Window - s.now.Sub(s.start)
	if float64(s.curr) <= room && s.prev > 0 {
		// prev·(left−t)/W ≤ room − curr
		t := left - time.Duration((room-float64(s.curr))*float64(l.Window)/float64(s.prev))
		return max(t, 0)
	}
	if float64(s.curr) <= room {
		return 0
	}
	// After the boundary: curr·(W−t')/W ≤ room.
	return left + l.Window - time.Duration(room*float64(l.Window)/float64(s.curr))
}

// exceeded builds the 429 answer.
func (l *Limiter) exceeded(s state, what string) *apperr.Error {
	e := apperr.New(apperr.RateLimitExceeded, "Too many %s; retry after the time in the Retry-After header.", what)
	e.RetryAfter = max(int(math.Ceil(l.retryAfter(s).Seconds())), 1)
	return e
}

// Allow counts one request of key and refuses it when the key is over its
// limit. Counter failures let the request through (and are logged): a
// limit must not take the API down.
// Errors: rate_limit_exceeded, with RetryAfter set.
func (l *Limiter) Allow(ctx context.Context, key, what string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.read(key)
	if err != nil {
		l.log.WarnContext(ctx, "rate limit counter failed", "limiter", l.Name, "error", err)
		return nil
	}
	used := int(math.Round(l.rate(s)))
	if used+1 > l.Limit {
		l.setHeaders(ctx, s, 0)
		return l.exceeded(s, what)
	}
	if err := l.counter.IncrementBy(key, s.start, 1); err != nil {
		l.log.WarnContext(ctx, "rate limit counter failed", "limiter", l.Name, "error", err)
	}
	l.setHeaders(ctx, s, l.Limit-used-1)
	return nil
}

// Blocked refuses key without counting when it is already over its limit.
// Errors: rate_limit_exceeded, with RetryAfter set.
func (l *Limiter) Blocked(ctx context.Context, key, what string) error {
	s, err := l.read(key)
	if err != nil {
		return nil
	}
	if int(math.Round(l.rate(s))) >= l.Limit {
		l.setHeaders(ctx, s, 0)
		return l.exceeded(s, what)
	}
	return nil
}

// Fail counts one failure of key and refuses it when the new count puts
// key over its limit. Counting and deciding are one step, so however many
// failures arrive at once, no more of them fit than the limit allows, on
// one instance or many sharing Redis. Unlike Allow, a refused failure stays
// counted: it was a failure too. Counter failures refuse nothing (and are
// logged).
// Errors: rate_limit_exceeded, with RetryAfter set.
func (l *Limiter) Fail(ctx context.Context, key, what string) error {
	s, err := l.add(ctx, key)
	if err != nil {
		l.log.WarnContext(ctx, "rate limit counter failed", "limiter", l.Name, "error", err)
		return nil
	}
	if int(math.Round(l.rate(s))) > l.Limit {
		l.setHeaders(ctx, s, 0)
		return l.exceeded(s, what)
	}
	return nil
}

// add adds one to key and returns the window as it stands after that
// count, read in the same step: in one Redis transaction, or under mu in
// memory (and when Redis fails, where httprate-redis counts then).
func (l *Limiter) add(ctx context.Context, key string) (state, error) {
	now := l.now().UTC()
	s := state{start: now.Truncate(l.Window), now: now}
	prevStart := s.start.Add(-l.Window)
	if l.redis != nil {
		// The keys httprate-redis reads in Get.
		currKey := fmt.Sprintf("%s:%d", l.Name, httprate.LimitCounterKey(key, s.start))
		prevKey := fmt.Sprintf("%s:%d", l.Name, httprate.LimitCounterKey(key, prevStart))
		// A client that hangs up is counted all the same.
		ctx := context.WithoutCancel(ctx)
		pipe := l.redis.TxPipeline()
		incr := pipe.IncrBy(ctx, currKey, 1)
		pipe.Expire(ctx, currKey, 3*l.Window)
		prev := pipe.Get(ctx, prevKey)
		_, err := pipe.Exec(ctx)
		if err == nil || errors.Is(err, redis.Nil) {
			p, _ := prev.Int() // redis.Nil: no count in the previous window
			s.curr, s.prev = int(incr.Val()), p
			return s, nil
		}
		// Otherwise count as httprate-redis does, which logs the failure
		// and switches to memory until Redis answers again.
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.counter.IncrementBy(key, s.start, 1); err != nil {
		return s, err
	}
	var err error
	s.curr, s.prev, err = l.counter.Get(key, s.start, prevStart)
	return s, err
}

type headersKey struct{}

// WithHeaders lets limiters called with ctx set their headers on h (the
// response's headers).
func WithHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headersKey{}, h)
}

// setHeaders tells the client of this limiter's window. Several limiters
// may count one request (an app's and its account's, then the checkout
// limits): the headers tell of the one with the fewest requests left, so
// of the one that refused, when one did.
func (l *Limiter) setHeaders(ctx context.Context, s state, remaining int) {
	h, ok := ctx.Value(headersKey{}).(http.Header)
	if !ok {
		return
	}
	remaining = max(remaining, 0)
	if prev := h[remainingHdr]; len(prev) > 0 {
		if n, err := strconv.Atoi(prev[0]); err == nil && n < remaining {
			return
		}
	}
	reset := s.start.Add(l.Window)
	resetIn := max(int(math.Ceil(reset.Sub(s.now).Seconds())), 0)
	rem := strconv.Itoa(remaining)
	// Keys in canonical form, values in one allocation each: every
	// request with a key pays for these.
	h[limitKeyHdr] = l.limitHdr[:1:1]
	h[remainingHdr] = []string{rem}
	h[resetHdr] = []string{strconv.FormatInt(reset.Unix(), 10)}
	h[policyHdr] = l.policyHdr[:1:1]
	h[rateLimitHdr] = []string{l.quoted + ";r=" + rem + ";t=" + strconv.Itoa(resetIn)}
}

// The limit headers' names, in canonical form (textproto.CanonicalMIMEHeaderKey).
const (
	limitKeyHdr  = "X-Ratelimit-Limit"
	remainingHdr = "X-Ratelimit-Remaining"
	resetHdr     = "X-Ratelimit-Reset"
	policyHdr    = "Ratelimit-Policy"
	rateLimitHdr = "Ratelimit"
)
