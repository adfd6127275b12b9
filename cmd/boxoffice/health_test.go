package main

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func TestReadyz(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		clock := &testClock{t: time.Now()}
		tb.m.ready.now = clock.Now
		ready := func(i int) *response { return tb.get(t, "/readyz", "") }

		t.Run("OneCheckPerSecond", func(t *testing.T) {
			tb.queries.Reset()
			for _, res := range race(200, ready) {
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			}
			checks := tb.queries.N()
			require.True(t, checks >= 1 && checks <= 2, "200 probes within a second made %d statements", checks)
			clock.Add(999 * time.Millisecond)
			require.Equal(t, http.StatusOK, ready(0).Status)
			require.Equal(t, checks, tb.queries.N(), "still the same second")
			clock.Add(time.Millisecond)
			require.Equal(t, http.StatusOK, ready(0).Status)
			require.Equal(t, 2*checks, tb.queries.N(), "a second later, one more check")
		})
		t.Run("ErrDatabaseGone", func(t *testing.T) {
			clock.Add(time.Second)
			require.Equal(t, http.StatusOK, ready(0).Status)
			require.NoError(t, db.Close())
			require.Equal(t, http.StatusOK, ready(0).Status, "the state of this second")
			clock.Add(time.Second)
			res := ready(0)
			require.Equal(t, http.StatusServiceUnavailable, res.Status)
			require.Equal(t, map[string]any{"status": "not_ready", "reason": "database unreachable"}, res.Body)
			require.Equal(t, "no-store", res.Header.Get("Cache-Control"))
			require.Equal(t, http.StatusOK, tb.get(t, "/healthz", "").Status, "the process is still up")
		})
	})
}
