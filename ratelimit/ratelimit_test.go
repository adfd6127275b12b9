package ratelimit

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
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
			require.NoError(t, l.Fail(ctx, "ip", "failures"), "failure %d fits", i+1)
		}
		require.Equal(t, apperr.RateLimitExceeded, apperr.CodeOf(l.Blocked(ctx, "ip", "failures")))
		require.NoError(t, l.Blocked(ctx, "other", "failures"), "keys are independent")
		err := l.Fail(ctx, "ip", "failures")
		require.Equal(t, apperr.RateLimitExceeded, apperr.CodeOf(err), "the fourth failure is over the limit")
		// The refused failure counts too: 4 in this window, none before, so
		// Blocked lets a request through once 4·(60−t)/60 ≤ 2 in the next
		// window: 50 s left + 30 s.
		require.Equal(t, 80, apperr.From(err).RetryAfter)
	})
}

// TestHeadersOfTheTightest: when several limiters count one request (an
// app's and its account's), the headers tell of the one with the fewest
// requests left, and of the one that refused.
func TestHeadersOfTheTightest(t *testing.T) {
	t.Parallel()
	app, c := newLimiter(t, 3)
	s, err := NewStore(context.Background(), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	s.Now = c.Now
	account := s.New("bx:account-test", 5, time.Minute)
	for i, want := range []struct {
		policy    string
		remaining string
	}{
		{`"app-test";q=3;w=60`, "2"}, // app 2 left, account 4
		{`"app-test";q=3;w=60`, "1"},
		{`"app-test";q=3;w=60`, "0"},
		{`"account-test";q=5;w=60`, "1"}, // another app of the account: 2 left of its 3, the account 1
		{`"account-test";q=5;w=60`, "0"},
		{`"account-test";q=5;w=60`, "0"}, // refused by the account
	} {
		h := http.Header{}
		ctx := WithHeaders(context.Background(), h)
		key := "app-1"
		if i >= 3 {
			key = "app-2"
		}
		if err := app.Allow(ctx, key, "requests"); err == nil {
			err = account.Allow(ctx, "account-1", "requests")
			require.Equal(t, i == 5, err != nil, "request %d: %v", i+1, err)
		}
		require.Equal(t, want.policy, h.Get("RateLimit-Policy"), "request %d", i+1)
		require.Equal(t, want.remaining, h.Get("X-RateLimit-Remaining"), "request %d", i+1)
	}
}

// TestNewLimits: every per-app limit has an account counterpart,
// AccountMultiple times as large.
func TestNewLimits(t *testing.T) {
	t.Parallel()
	s, err := NewStore(context.Background(), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		cfg  Config
		want map[string]int // limiter name → limit
	}{
		{"Defaults", Config{}, map[string]int{
			"boxoffice:auth": 60, "boxoffice:app-live": 120, "boxoffice:app-test": 240, "boxoffice:checkout": 30,
			"boxoffice:account-live": 360, "boxoffice:account-test": 720, "boxoffice:account-checkout": 90}},
		{"Configured", Config{FailedAuth: 9, LiveApp: 5, TestApp: 7, Checkout: 2, AccountMultiple: 4, Prefix: "p"}, map[string]int{
			"p:auth": 9, "p:app-live": 5, "p:app-test": 7, "p:checkout": 2,
			"p:account-live": 20, "p:account-test": 28, "p:account-checkout": 8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLimits(s, tt.cfg)
			got := map[string]int{}
			for _, lim := range []*Limiter{l.FailedAuth, l.LiveApp, l.TestApp, l.Checkout, l.LiveAccount, l.TestAccount, l.CheckoutAccount} {
				got[lim.Name] = lim.Limit
			}
			require.Equal(t, tt.want, got)
			require.Same(t, l.LiveAccount, l.Account(true))
			require.Same(t, l.TestAccount, l.Account(false))
		})
	}
}

func TestLimiterFailIsExact(t *testing.T) {
	t.Parallel()
	stores := map[string]string{"Memory": ""}
	if url := os.Getenv("TEST_REDIS_URL"); url != "" {
		stores["Redis"] = url
	} else if os.Getenv("CI") != "" {
		t.Fatal("CI must set TEST_REDIS_URL")
	}
	for name, url := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := &clock{t: time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC)}
			s, err := NewStore(context.Background(), url, slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			s.Now = c.Now
			// Two limiters on one store stand for two instances sharing Redis
			// (in memory, two limiters are two separate buckets: use one).
			a := s.New("t"+rand.Text()+":auth", 60, time.Minute)
			b := a
			if url != "" {
				b = s.New(a.Name, 60, time.Minute)
			}
			var refused atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 600 {
				wg.Go(func() {
					<-start
					l := []*Limiter{a, b}[i%2]
					if err := l.Fail(context.Background(), "203.0.113.9", "failures"); err != nil {
						require.Equal(t, apperr.RateLimitExceeded, apperr.CodeOf(err))
						refused.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			require.EqualValues(t, 540, refused.Load(), "600 failures at once against a limit of 60")
			require.Error(t, a.Blocked(context.Background(), "203.0.113.9", "failures"))
		})
	}
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
		{"HopWithPort", "10.1.2.3:80", "198.51.100.8:1234", "198.51.100.8"},
		{"IPv6HopWithPort", "10.1.2.3:80", "[2001:db8::1]:443", "2001:db8::1"},
		{"IPv6HopInBrackets", "10.1.2.3:80", "[2001:db8::1]", "2001:db8::1"},
		{"TrustedHopWithPort", "10.1.2.3:80", "198.51.100.8:1234, 10.9.9.9:80", "198.51.100.8"},
		{"MappedHop", "10.1.2.3:80", "::ffff:198.51.100.8", "198.51.100.8"},
		{"UnclosedBracket", "10.1.2.3:80", "[2001:db8::1", "10.1.2.3"},
		{"PortOnly", "10.1.2.3:80", ":443", "10.1.2.3"},
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

func TestClientKey(t *testing.T) {
	t.Parallel()
	for ip, want := range map[string]string{
		"203.0.113.7":          "203.0.113.7",
		"::ffff:203.0.113.7":   "203.0.113.7",
		"2001:db8:1:2::1":      "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::9": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not-an-ip":            "not-an-ip",
	} {
		require.Equal(t, want, ClientKey(ip), ip)
	}
}
