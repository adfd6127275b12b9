package ratelimit

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/stretchr/testify/require"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func newLimiter(t *testing.T, limit int) (*Limiter, *clock) {
	t.Helper()
	// 10 s into a minute window.
	c := &clock{t: time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC)}
	s, err := NewStore(context.Background(), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	s.Now = c.Now
	return s.New("bx:app-test", limit, time.Minute), c
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	t.Run("RetryAfterInFirstWindow", func(t *testing.T) {
		l, _ := newLimiter(t, 5)
		h := http.Header{}
		ctx := WithHeaders(context.Background(), h)
		for i := 0; i < 5; i++ {
			require.NoError(t, l.Allow(ctx, "k", "requests"), "request %d", i+1)
		}
		require.Equal(t, "0", h.Get("X-RateLimit-Remaining"))
		err := l.Allow(ctx, "k", "requests")
		ae := apperr.From(err)
		require.Equal(t, apperr.RateLimitExceeded, ae.Code)
		require.Equal(t, 429, ae.Status())
		// 5 in the current window, none before: a slot frees once the next
		// window has slid 1/5 of the way: 50 s left + 12 s.
		require.Equal(t, 62, ae.RetryAfter)
		require.Equal(t, "5", h.Get("X-RateLimit-Limit"))
		require.Equal(t, "1795262460", h.Get("X-RateLimit-Reset"))
		require.Equal(t, `"app-test";q=5;w=60`, h.Get("RateLimit-Policy"))
		require.Equal(t, `"app-test";r=0;t=50`, h.Get("RateLimit"))
	})
	t.Run("RetryAfterWithPreviousWindow", func(t *testing.T) {
		l, c := newLimiter(t, 5)
		ctx := context.Background()
		for i := 0; i < 5; i++ {
			require.NoError(t, l.Allow(ctx, "k", "requests"))
		}
		c.Add(60 * time.Second) // 10 s into the next window: weight of the 5 is 50/60
		// rate = 5·50/60 ≈ 4.17 → rounds to 4: one more fits.
		require.NoError(t, l.Allow(ctx, "k", "requests"))
		err := l.Allow(ctx, "k", "requests")
		// curr 1, prev 5: 5·(50−t)/60 ≤ 5−1−1 → t ≥ 14 s.
		require.Equal(t, 14, apperr.From(err).RetryAfter)
		c.Add(14 * time.Second)
		require.NoError(t, l.Allow(ctx, "k", "requests"), "the slot is free when Retry-After said")
	})
	t.Run("BlockedDoesNotCount", func(t *testing.T) {
		l, _ := newLimiter(t, 3)
		ctx := context.Background()
		for i := 0; i < 10; i++ {
			require.NoError(t, l.Blocked(ctx, "ip", "failures"))
		}
		for i := 0; i < 3; i++ {
			l.Count(ctx, "ip")
		}
		require.Equal(t, apperr.RateLimitExceeded, apperr.CodeOf(l.Blocked(ctx, "ip", "failures")))
		require.NoError(t, l.Blocked(ctx, "other", "failures"), "keys are independent")
	})
}

func TestClientIP(t *testing.T) {
	t.Parallel()
	trusted, err := ParseTrusted("10.0.0.0/8, 192.168.1.5")
	require.NoError(t, err)
	tests := []struct {
		name, remote, xff, want string
	}{
		{"Direct", "203.0.113.7:5555", "", "203.0.113.7"},
		{"ForgedHeaderIgnored", "203.0.113.7:5555", "1.2.3.4", "203.0.113.7"},
		{"TrustedProxy", "10.1.2.3:80", "198.51.100.9", "198.51.100.9"},
		{"ChainOfProxies", "10.1.2.3:80", "6.6.6.6, 198.51.100.9, 192.168.1.5", "198.51.100.9"},
		{"ClientForgesLeftmost", "10.1.2.3:80", "1.1.1.1, 198.51.100.9", "198.51.100.9"},
		{"GarbageHop", "10.1.2.3:80", "198.51.100.9, nonsense", "10.1.2.3"},
		{"IPv6", "[2001:db8::1]:443", "", "2001:db8::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			require.Equal(t, tt.want, ClientIP(r, trusted))
		})
	}
	_, err = ParseTrusted("10.0.0.0/33")
	require.Error(t, err)
}
